// How a service makes its clients' edits: a writer the service calls once per edit id, with what the
// scope sees, and the writer that makes each edit a two-phase transaction of a BasicDataSource.

public import SimpleSourceCore

/// Makes the edits clients send a ``WireService`` (``WireMessage/edit(_:)``); give one to the service's
/// `edits` parameter.
///
/// The service calls ``write`` once per edit id (a client that sends an id again after a reconnect gets the
/// first answer), with the client's scope and what that scope may see. It returns the source's
/// version that holds the edit (the version it saw when the edit changed nothing), or throws the
/// ``WireError`` the client receives in ``WireMessage/refused(edit:error:)``.
///
/// The service remembers answers in memory, per process. A writer over shared or durable storage records
/// each answer in the write's own transaction, keyed by the client's scope and the edit's id, with the
/// edit's ``WireEdit/fingerprint``, and looks it up first with ``WireEdit/recall(recorded:fingerprint:answersKeptFrom:)``: then a resend is answered once on any
/// instance and after any restart.
public struct WireWriter<Section: SectionType, Scope: Hashable & Sendable>: Sendable {
  /// Makes one edit for a client of `scope`, who sees what `visible` allows; returns the version that
  /// holds it.
  public typealias Write =
    @Sendable (_ edit: WireEdit<Section>, _ scope: Scope, _ visible: WireVisibility<Section>)
    async throws(WireError) -> Int

  /// Makes one edit.
  public let write: Write

  /// A writer that makes each edit with `write`: your storage first (a database transaction), then the
  /// source, as ``BasicDataSource/prepare(from:_:)-(_,(Transaction<Section>)->Result)`` lets you.
  public init(_ write: @escaping Write) { self.write = write }

  /// A writer that makes each edit one transaction of `source`, checked against the client's scope: an
  /// item or section id the scope may not see reads as unknown (an item in a section it may not see is
  /// not seen either), and an item it may not see cannot be written.
  ///
  /// The edits of all clients are made by one ``GroupCommit``: those that arrive before a group's turn of
  /// the source form that group, one transaction and one version for them all (coalesced into the source's
  /// batches with what else is pending, as direct writes are), each edit answered on its own
  /// (one that does not apply is refused, and refuses nothing else). Each edit's operations apply
  /// together or not at all, after the edits that arrived before it. The service's own writers keep
  /// writing the source directly meanwhile: they take their turns with the groups, never refused.
  ///
  /// A ``WireOperation/named(_:)`` runs the body `named` holds under its name, on the source's state in
  /// the write's transaction (never a body the client's message carried), with the arguments the client
  /// sent. An unknown name, arguments that do not decode, and a body that throws are refused with
  /// ``WireError/Code-swift.struct/invalidEdit`` (`unknownEdit`, `invalidArguments`, `editRefused: <reason>`)
  /// and nothing of the edit is made. For a client with a scope, every item the body touched must be one
  /// the scope sees, before and after, and one it may write; a body that inserts, deletes, moves or
  /// updates sections is refused for such a client (what it reached cannot be checked by the ids it
  /// touched). Such a refusal names no id, so it tells nothing of what the scope hides.
  /// - Parameters:
  ///   - source: The source the edits are made in.
  ///   - named: The named edits clients may call; none by default.
  /// - Complexity: O(*k* log *n*) for *k* ids an edit names or a named edit touches, as any transaction;
  ///   the group's diff is shared. Inlinable, so that an edit's body is specialized for your sections
  ///   where you call this.
  @inlinable
  public static func transactions(
    on source: BasicDataSource<Section>, named: NamedEdits<Section> = NamedEdits()
  )
    -> Self
  {
    let commits = GroupCommit<Section, Void>(source)
    return Self { (edit, _, visible) throws(WireError) in
      // The server's own bodies, found by name, before the group's turn.
      let edit = try edit.resolved(in: named)
      do {
        return try await commits.write { (transaction: inout Transaction<Section>) throws in
          // Checked only when the service has rules: most writes skip the call.
          let checked = visible.sections != nil || visible.rows != nil
          for operation in edit.operations {
            if checked, case .named(let call) = operation {
              let before = transaction.snapshot
              let touched = try transaction.logging {
                (transaction) throws(DataSourceError<Section.ID, Section.Item.ID>) in
                try call.run(on: &transaction)
              }
              try checkNamed(touched, before: before, after: transaction.snapshot, visible: visible)
              continue
            }
            if checked { try check(operation, in: transaction.snapshot, visible: visible) }
            try operation.apply(to: &transaction)
            if checked, case .patch(let id, _) = operation {
              try checkPatched(id, in: transaction.snapshot, visible: visible)
            }
          }
        }.version.number
      } catch let error as WireError {
        throw error
      } catch let error as DataSourceError<Section.ID, Section.Item.ID> {
        throw WireError(.invalidEdit, refusal(error))
      } catch {
        throw WireError(.editNotMade, "the source did not make the edit")
      }
    }
  }

  /// Refuses a named edit whose body, for a client with a scope, changed sections, or touched an item the
  /// scope does not see before or after it, or wrote one the row rule refuses. The refusal names no id.
  /// - Complexity: O(*k* log *n*) for the *k* items touched, besides the rules.
  @usableFromInline
  static func checkNamed(
    _ touched: Set<Section.Item.ID>?, before: Snapshot<Section>, after: Snapshot<Section>,
    visible: WireVisibility<Section>
  ) throws(WireError) {
    guard let touched else {
      throw WireError(.invalidEdit, "editRefused: a named edit of a client with a scope edits items only")
    }
    let outside = WireError(.invalidEdit, "editRefused: the edit reaches rows outside this client's scope")
    for id in touched {
      if visible.allowsItem(withID: id, in: before) == false { throw outside }
      if visible.allowsItem(withID: id, in: after) == false { throw outside }
    }
  }

  /// What a client is told of the source's refusal: its code and the id it names (an id the client sent),
  /// never positions or section indices, which count rows of the whole source the client may not see.
  /// - Complexity: O(1).
  @usableFromInline
  static func refusal(_ error: DataSourceError<Section.ID, Section.Item.ID>) -> String {
    var parts = ["\(error.code)"]
    if let section = error.sectionID { parts.append("section id \(section)") }
    if let item = error.itemID { parts.append("item id \(item)") }
    // A named edit's own reason, and what was wrong with a client's own patch, are the client's to read.
    if error.code == .editRefused || error.code == .invalidPatch, let detail = error.detail {
      parts.append(detail)
    }
    return parts.joined(separator: ": ")
  }

  /// Refuses a patch whose result `visible`'s row rule does not accept: a client may not patch an item
  /// out of what it may write.
  /// - Complexity: O(log *n*), besides the rule.
  @usableFromInline
  static func checkPatched(
    _ id: Section.Item.ID, in snapshot: Snapshot<Section>, visible: WireVisibility<Section>
  )
    throws
  {
    guard let rows = visible.rows, let item = snapshot.item(withID: id), !rows(item) else { return }
    throw WireError(.invalidEdit, "the item \(id) is outside what this client may write")
  }

  /// Refuses `operation` when it names an item or a section `visible` does not allow, as if it did not
  /// exist, or writes an item `visible`'s row rule does not accept.
  /// - Complexity: O(log *n*) per id the operation names, besides the rules.
  @usableFromInline
  static func check(
    _ operation: WireOperation<Section>, in snapshot: Snapshot<Section>, visible: WireVisibility<Section>
  ) throws {
    guard visible.sections != nil || visible.rows != nil else { return }
    // Closures, not key paths: a key path in generic code is instantiated on every call.
    var inserted: Set<Section.Item.ID> = []
    if case .insert(let items, _) = operation { inserted = Set(items.lazy.map { $0.id }) }
    for id in operation.itemIDs {
      if inserted.contains(id) { continue }
      if visible.allowsItem(withID: id, in: snapshot) == false {
        throw DataSourceError<Section.ID, Section.Item.ID>(code: .unknownItemID, itemID: id)
      }
    }
    if let section = operation.placeSection, visible.allowsSection(withID: section, in: snapshot) == false {
      throw DataSourceError<Section.ID, Section.Item.ID>(code: .unknownSectionID, sectionID: section)
    }
    if let rows = visible.rows {
      for item in operation.writtenItems where !rows(item) {
        throw WireError(.invalidEdit, "the item \(item.id) is outside what this client may write")
      }
    }
  }
}
