// An @Observable model of a source's list: each row's content is observable on its own, so a batch
// invalidates exactly the rows it changed, and a section's row list only when rows come, go or move.

public import Observation
public import SimpleSourceCore

/// An `@Observable` model of any source's sections and rows, for SwiftUI (`ForEach` over ``sections``
/// and each section's ``ObservedSection/rows``) or UIKit's observation tracking.
///
/// ```swift
/// let list = await ObservedList(following: tasks)
/// // In a view: ForEach(list.sections) { section in ForEach(section.rows) { row in Text(row.item.title) } }
/// await list.reached(version)  // tests: the model holds that version
/// ```
///
/// Each row is an object of its own (``ObservedRow``) whose ``ObservedRow/item`` is the only observable
/// part, so a batch that edits or refreshes one row invalidates that row's observers only; a batch that
/// inserts, deletes or moves rows assigns the section's ``ObservedSection/rows`` once (its observers,
/// not the rows'); a batch that inserts, deletes or moves sections assigns ``sections`` once. Rows and
/// sections keep their objects (their identity) for as long as their ids are shown.
///
/// - **Cost.** A batch that edits *k* rows costs O(*k*) plus the batch's own derivation; one that
///   inserts, deletes or moves rows costs O(*k*) lookups plus moving the affected sections' arrays
///   (O(*s*) for a section of *s* rows); one that changes sections rebuilds the section list, reusing
///   every object whose id stays: O(*n*).
/// - **Pacing.** Batches arrive at most once per frame by default (``framePacing``): the source
///   coalesces what happened in between into one batch.
/// - **Ending.** ``stop()`` ends the subscription; the model keeps what it shows. A source that finishes
///   (is released) ends it too. ``reached(_:)`` then answers `false` for a version it never got.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
@Observable
public final class ObservedList<Section: SectionType> {
  /// The item type.
  public typealias Item = Section.Item

  /// The sections shown, in order.
  public internal(set) var sections: [ObservedSection<Section>]
  /// The source version shown.
  @ObservationIgnored public internal(set) var version: Version
  /// The newest state the source sent.
  @ObservationIgnored var newest: Snapshot<Section>
  /// Edits made from the list (``move(fromOffsets:toOffset:inSection:using:)``,
  /// ``delete(atOffsets:inSection:using:)``) that the model shows before the source has them.
  @ObservationIgnored var pending: [PendingEdit<Section>] = []

  /// Every row shown, by id.
  @ObservationIgnored var rowsByID: [Item.ID: ObservedRow<Item>] = [:]
  /// Every section shown, by id.
  @ObservationIgnored private var sectionsByID: [Section.ID: ObservedSection<Section>] = [:]
  @ObservationIgnored private var following: ModelFollowing?
  /// The counter of the source's versions, which `reached(_:)` checks.
  @ObservationIgnored let counter: VersionCounter

  /// One batch per frame (1/60 s) at most.
  public nonisolated static var framePacing: Pacing { .interval(.milliseconds(16), clock: ContinuousClock()) }

  /// Follows `source`: shows its current state at once, then applies each batch.
  /// - Complexity: O(*n*) to build the rows.
  public init(following source: some DataSourceType<Section>, pacing: Pacing = framePacing) async {
    let subscription = await source.subscribe(pacing: pacing)
    sections = []
    version = subscription.version
    counter = subscription.counter
    newest = subscription.snapshot
    sections = subscription.snapshot.sections.map(makeSection)
    following = ModelFollowing(subscription) { [weak self] batch in
      guard let self else { return false }
      self.apply(batch)
      return true
    }
  }

  /// Ends the subscription; the model keeps what it shows.
  public func stop() { following?.stop() }

  /// Returns `true` once the model holds `version` or a later one, `false` when it stops first or the
  /// waiting task is cancelled.
  ///
  /// Any version the source made may be passed, such as the one a mutation returned (G13): a version no
  /// batch carries (edits that cancelled out, or a change the model's view of the source skips) is
  /// reached once the model holds every batch before it.
  /// - Throws: ``VersionError/Code-swift.enum/otherCounter``, at once, for a version of another counter
  ///   than the source's it follows (a projection's own, or another source's).
  @discardableResult
  public func reached(_ version: Version) async throws(VersionError) -> Bool {
    try VersionError.check(version, against: counter)
    return await following?.reached(version.number) ?? false
  }

  // MARK: - Applying

  /// A section's own content: the section without its items.
  private static func ownContent(of section: Section) -> Section {
    var content = section
    content.items = []
    return content
  }

  private func makeSection(_ section: Section) -> ObservedSection<Section> {
    let rows = section.items.map(makeRow)
    let observed = ObservedSection(content: Self.ownContent(of: section), rows: rows)
    sectionsByID[section.id] = observed
    return observed
  }

  private func makeRow(_ item: Item) -> ObservedRow<Item> {
    let row = ObservedRow(item)
    rowsByID[item.id] = row
    return row
  }

  /// Applies one batch: the rows it edited, the row lists it reshaped, the section list if it changed.
  func apply(_ batch: UpdateBatch<Section>) {
    let changeset = batch.changeset
    let target = changeset.target
    newest = batch.snapshot
    if !pending.isEmpty {
      // The model shows edits the batch may not hold yet: it is rebuilt as the batch's state with them.
      version = batch.to
      showPending()
      return
    }
    if changeset.sectionChanges.hasStructuralChanges {
      rebuild(target.sections)
    } else {
      for update in changeset.sectionChanges.updates {
        sections[update.to].content = Self.ownContent(of: target.sectionContent(at: update.to))
      }
      reshapeRows(changeset.itemChanges, target: target)
      // Updates include forced refreshes (`refreshItems`): an equal item is set too, and its observers told.
      for update in changeset.itemChanges.updates { rowsByID[update.id]?.item = target[update.to] }
    }
    version = batch.to
  }

  /// Takes out deleted and moved rows, puts in inserted and moved ones; each affected section's row list
  /// is assigned once.
  private func reshapeRows(_ changes: ChangeList<Item.ID, ItemPosition>, target: Snapshot<Section>) {
    guard !changes.deletes.isEmpty || !changes.inserts.isEmpty || !changes.moves.isEmpty else { return }
    var working: [Int: [ObservedRow<Item>]] = [:]
    func rows(_ section: Int) -> [ObservedRow<Item>] { working[section] ?? sections[section].rows }
    var removals = changes.deletes.map(\.from) + changes.moves.map(\.from)
    removals.sort { ($0.section, $0.item) > ($1.section, $1.item) }
    for position in removals {
      var list = rows(position.section)
      list.remove(at: position.item)
      working[position.section] = list
    }
    for delete in changes.deletes { rowsByID[delete.id] = nil }
    var placements: [(position: ItemPosition, id: Item.ID)] =
      changes.inserts.map { ($0.to, $0.id) } + changes.moves.map { ($0.to, $0.id) }
    placements.sort { ($0.position.section, $0.position.item) < ($1.position.section, $1.position.item) }
    for (position, id) in placements {
      let row = rowsByID[id] ?? makeRow(target[position])
      var list = rows(position.section)
      list.insert(row, at: position.item)
      working[position.section] = list
    }
    for move in changes.moves {
      // A moved row whose content changed too.
      guard let row = rowsByID[move.id], row.item != target[move.to] else { continue }
      row.item = target[move.to]
    }
    for (section, list) in working { sections[section].rows = list }
  }

  /// Rebuilds the section list after sections came, went or moved, keeping every object whose id stays.
  func rebuild(_ target: [Section]) {
    var keptRows: [Item.ID: ObservedRow<Item>] = [:]
    var keptSections: [Section.ID: ObservedSection<Section>] = [:]
    var next: [ObservedSection<Section>] = []
    for section in target {
      let header = Self.ownContent(of: section)
      let rows = section.items.map { item in
        let row = rowsByID[item.id] ?? ObservedRow(item)
        if row.item != item { row.item = item }
        keptRows[item.id] = row
        return row
      }
      let observed: ObservedSection<Section>
      if let existing = sectionsByID[section.id] {
        observed = existing
        if !existing.content.isContentEqual(to: header) { existing.content = header }
        if existing.rows.map(\.id) != rows.map(\.id) { existing.rows = rows }
      } else {
        observed = ObservedSection(content: header, rows: rows)
      }
      keptSections[section.id] = observed
      next.append(observed)
    }
    rowsByID = keptRows
    sectionsByID = keptSections
    if !sections.elementsEqual(next, by: ===) { sections = next }
  }
}

/// A section of an ``ObservedList``: its own content and its rows, each observable on its own.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
@Observable
public final class ObservedSection<Section: SectionType>: Identifiable {
  /// The section's id.
  public nonisolated let id: Section.ID
  /// The section's own content (header, footer); its `items` are empty: the rows are ``rows``.
  public internal(set) var content: Section
  /// The rows, in order; assigned when rows come, go or move, not when a row's content changes.
  public internal(set) var rows: [ObservedRow<Section.Item>]

  init(content: Section, rows: [ObservedRow<Section.Item>]) {
    id = content.id
    self.content = content
    self.rows = rows
  }
}

/// A row of an ``ObservedList``: its item, observable on its own.
///
/// Written by hand rather than with `@Observable`, whose setter skips observers when the new value is
/// `==` to the old one: a forced refresh (`refreshItems`) sets an equal item and must still redraw.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
public final class ObservedRow<Item: Identifiable & Equatable & Sendable>: Identifiable, Observable
where Item.ID: Sendable {
  /// The item's id.
  public nonisolated let id: Item.ID
  private let registrar = ObservationRegistrar()
  private var stored: Item

  /// The item; set, and its observers told, when a batch edits or refreshes it.
  public internal(set) var item: Item {
    get {
      registrar.access(self, keyPath: \.item)
      return stored
    }
    set {
      registrar.withMutation(of: self, keyPath: \.item) { stored = newValue }
    }
  }

  init(_ item: Item) {
    id = item.id
    stored = item
  }
}
