// Edits made in the list itself (SwiftUI's onMove and onDelete): shown at once, sent to the source, and
// reconciled when the source's batches come back, without showing the edit twice or undoing it meanwhile.

public import Foundation
public import SimpleSourceCore

/// An edit made from an ``ObservedList`` that the source may not hold yet.
struct PendingEdit<Section: SectionType> {
  enum Kind {
    /// A move, kept by ids (``InteractiveMove``), so it lands right over whatever the source did since.
    case move(InteractiveMove<Section>)
    /// Rows deleted, by id.
    case delete(Set<Section.Item.ID>)
  }

  let kind: Kind
  /// Which user operation it belongs to (one `move` call may make several moves).
  let operation: Int
  /// The source version that holds it, once the source answered.
  var heldFrom: Int?
}

@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
extension ObservedList {
  /// Moves the rows at `offsets` of the section at `sectionIndex` to `destination` (SwiftUI's `onMove`;
  /// call it inside the callback, not from a `Task`): the offsets are resolved to rows *now*, against
  /// what the user sees, and the model shows the move before this returns (``ObservedSection/rows``
  /// assigned once). The returned task then hands it to `delegate` (a `BasicDataSource` is one), the
  /// reorder path ``ListViewDataSource`` uses, one ``InteractiveMove`` per row moved, kept by the ids of
  /// the rows around it: a batch that lands between the gesture and the commit (a row inserted or
  /// deleted above, the dragged row moved by another writer) cannot make the source move another row.
  /// Until the model holds the version the delegate answered, every batch is shown with the move on
  /// top, so the rows never jump back; the source's own batch for the move then changes nothing shown
  /// (no second update).
  ///
  /// ```swift
  /// .onMove { list.move(fromOffsets: $0, toOffset: $1, inSection: index, using: tasks) }
  /// ```
  ///
  /// - Returns: The commit; its value throws ``DataSourceError`` when `sectionIndex`, `offsets` or
  ///   `destination` was out of range (nothing changed), or the delegate's error when it refused: the
  ///   move is rolled back, and the model shows the source's state, one update.
  /// - Complexity: O(*s*) for a section of *s* rows, plus the delegate's work; while the move is on its
  ///   way, each batch rebuilds the list: O(*n*).
  @discardableResult
  public func move(
    fromOffsets offsets: IndexSet, toOffset destination: Int, inSection sectionIndex: Int,
    using delegate: some ReorderingDelegate<Section>
  ) -> Task<Void, any Error> {
    let commit: @MainActor () async throws -> Void
    do {
      commit = try startMove(
        fromOffsets: offsets, toOffset: destination, inSection: sectionIndex, using: delegate)
    } catch {
      return Task.schedulable("an edit") { throw error }
    }
    return Task.schedulable("an edit") { try await commit() }
  }

  /// The synchronous half of ``move(fromOffsets:toOffset:inSection:using:)``: resolves, shows and
  /// registers the move; returns what sends it.
  private func startMove(
    fromOffsets offsets: IndexSet, toOffset destination: Int, inSection sectionIndex: Int,
    using delegate: some ReorderingDelegate<Section>
  ) throws -> @MainActor () async throws -> Void {
    let rows = try checkedRows(offsets, inSection: sectionIndex)
    guard (0...rows.count).contains(destination) else {
      throw DataSourceError<Section.ID, Item.ID>.itemOutOfRange(
        ItemPosition(section: sectionIndex, item: destination))
    }
    let moved = offsets.map { rows[$0] }
    let remaining = rows.indices.filter { !offsets.contains($0) }.map { rows[$0] }
    let insertion = destination - offsets.count(in: 0..<destination)
    // One move per row moved, each recorded against the arrangement before it: the first goes before the
    // row that follows the insertion point (or to the end), each next one after the one before it.
    var arrangement = rows
    var moves: [InteractiveMove<Section>] = []
    var shown = sectionsShown()
    for (index, row) in moved.enumerated() {
      guard let current = arrangement.firstIndex(where: { $0 === row }) else { continue }
      var without = arrangement
      without.remove(at: current)
      let place =
        if index > 0, let previous = without.firstIndex(where: { $0 === moved[index - 1] }) {
          previous + 1
        } else if insertion < remaining.count,
          let next = without.firstIndex(where: { $0 === remaining[insertion] })
        {
          next
        } else {
          without.count
        }
      without.insert(row, at: place)
      if place != current {
        shown[sectionIndex].items = arrangement.map(\.item)
        moves.append(
          try InteractiveMove(
            in: shown, from: ItemPosition(section: sectionIndex, item: current),
            to: ItemPosition(section: sectionIndex, item: place)))
      }
      arrangement = without
    }
    guard !moves.isEmpty else { return {} }
    sections[sectionIndex].rows = arrangement
    return register(moves.map { .move($0) }) { [moves] in
      var version = try await delegate.reorder(moves[0])
      for move in moves.dropFirst() { version = try await delegate.reorder(move) }
      return version
    }
  }

  /// Deletes the rows at `offsets` of the section at `sectionIndex` (SwiftUI's `onDelete`; call it
  /// inside the callback, not from a `Task`): the offsets are resolved to ids *now*, and the rows leave
  /// the model before this returns, as SwiftUI requires of `onDelete`. The returned task then has
  /// `commit` delete those ids from the source and return a version that holds it
  /// (`{ try await tasks.deleteItems($0) }` for a `BasicDataSource`). Reconciled as
  /// ``move(fromOffsets:toOffset:inSection:using:)``: a batch that lands meanwhile cannot make it
  /// delete another row, the source's batch for it changes nothing shown, and a refusal rolls it back.
  ///
  /// - Returns: The commit; its value throws ``DataSourceError`` when `sectionIndex` or `offsets` was
  ///   out of range (nothing changed), or `commit`'s error: the rows come back.
  /// - Complexity: O(*s*), plus `commit`'s work; while the delete is on its way, each batch rebuilds the
  ///   list: O(*n*).
  @discardableResult
  public func delete(
    atOffsets offsets: IndexSet, inSection sectionIndex: Int,
    using commit: @escaping @Sendable ([Item.ID]) async throws -> Version
  ) -> Task<Void, any Error> {
    let rows: [ObservedRow<Item>]
    do {
      rows = try checkedRows(offsets, inSection: sectionIndex)
    } catch {
      return Task.schedulable("a deletion") { throw error }
    }
    let ids = offsets.map { rows[$0].id }
    guard !ids.isEmpty else { return Task.schedulable("a deletion") {} }
    sections[sectionIndex].rows = rows.indices.filter { !offsets.contains($0) }.map { rows[$0] }
    let send = register([.delete(Set(ids))]) { try await commit(ids) }
    return Task.schedulable("a deletion") { try await send() }
  }

  // MARK: - Reconciling

  /// The rows of the section at `sectionIndex`, after checking it and `offsets`.
  private func checkedRows(_ offsets: IndexSet, inSection sectionIndex: Int) throws(DataSourceError<
    Section.ID, Item.ID
  >)
    -> [ObservedRow<Item>]
  {
    guard sections.indices.contains(sectionIndex) else { throw .sectionOutOfRange(sectionIndex) }
    let rows = sections[sectionIndex].rows
    if let bad = offsets.first(where: { !rows.indices.contains($0) }) {
      throw .itemOutOfRange(ItemPosition(section: sectionIndex, item: bad))
    }
    return rows
  }

  /// The sections as shown, with their items: what an ``InteractiveMove`` is recorded against.
  private func sectionsShown() -> [Section] {
    sections.map { section in
      var copy = section.content
      copy.items = section.rows.map(\.item)
      return copy
    }
  }

  /// Keeps `edits` shown, from now until the source holds them; returns what sends them: it runs
  /// `operation`, which answers the version that holds them, and rolls them back when it throws.
  private func register(
    _ edits: [PendingEdit<Section>.Kind], _ operation: @escaping @Sendable () async throws -> Version
  ) -> @MainActor () async throws -> Void {
    let number = (pending.map(\.operation).max() ?? 0) + 1
    pending += edits.map { PendingEdit(kind: $0, operation: number, heldFrom: nil) }
    return { [self] in
      let version: Int
      do {
        let made = try await operation()
        try VersionError.check(made, against: counter)
        version = made.number
      } catch {
        pending.removeAll { $0.operation == number }
        showPending()
        throw error
      }
      for index in pending.indices where pending[index].operation == number {
        pending[index].heldFrom = version
      }
      // The model shows the edits already; once it holds their version they are dropped, here when the
      // source's batch came first, otherwise with that batch.
      if version <= self.version.number { showPending() }
    }
  }

  /// Drops the edits the model's version holds, then shows the newest state with the others on top:
  /// one update of each row list, section list or row that differs from what is shown.
  func showPending() {
    pending.removeAll { edit in edit.heldFrom.map { $0 <= version.number } ?? false }
    var target = newest.sections
    for edit in pending {
      switch edit.kind {
      case .delete(let ids):
        for index in target.indices { target[index].items.removeAll { ids.contains($0.id) } }
      case .move(let move):
        // A move whose item or section is gone since is dropped; the source refuses it too.
        guard let (from, to) = try? move.resolve(in: target) else { continue }
        let item = target[from.section].items.remove(at: from.item)
        target[to.section].items.insert(item, at: to.item)
      }
    }
    rebuild(target)
  }
}
