// An @Observable window over one section of a source of any size: it holds the rows on screen and a
// margin, moving it is one update, and a batch elsewhere in the section costs its own size, not the list's.

public import Observation
public import SimpleSourceCore

/// An `@Observable` window over rows `range` of one section of any source, for a list too large to
/// model whole (a million rows): only the rows in the window, and a margin around it, are objects.
///
/// ```swift
/// let window = await ObservedWindow(following: messages, section: "inbox", range: 0..<50)
/// // In a view: ForEach(window.rows) { row in Text(row.item.subject) }, scrolled over window.count rows
/// window.move(to: 400..<450)   // one update of `rows`, rows whose ids stay keep their objects
/// ```
///
/// What is observable, and when it changes:
/// - ``rows``: the items at the window's positions that exist, in order, each an ``ObservedRow`` whose
///   ``ObservedRow/item`` is observable on its own. Assigned only when the ids shown change: rows came,
///   went or moved inside the window, or before it (which shifts what the window shows), or the window
///   moved. An edit of a row in the window sets that row's item only.
/// - ``count``: the number of rows in the section, assigned only when it changes (for the scroll size).
/// - ``range``: the window asked for; it may extend past the end (``rows`` then holds what exists).
///
/// - **Cost.** The newest snapshot is held by reference (persistent, shared with the source). A batch
///   costs O(*k*) for its *k* changes when it changes nothing in or before the window (an edit or an
///   insert after it: ``count`` only), and O((*w* + 2*m*) log *n*) to read the window and its margin
///   again when it does; ``move(to:)`` costs the same. Nothing costs O(*n*).
/// - **Margin.** Rows within `margin` positions of the window are kept as objects too, so a small scroll
///   reuses them (their identity, and what observes them).
/// - **Ending.** ``stop()`` ends the subscription; the window keeps what it shows and can still move over
///   the last state it had. A source that finishes ends it too. A section that does not exist (yet, or
///   any more) shows no rows and a ``count`` of 0; a range past the end shows the rows that exist.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
@Observable
public final class ObservedWindow<Section: SectionType> {
  /// The item type.
  public typealias Item = Section.Item

  /// The section the window is over.
  public nonisolated let sectionID: Section.ID
  /// The positions asked for.
  public private(set) var range: Range<Int>
  /// The rows at the positions of ``range`` that exist, in order.
  public private(set) var rows: [ObservedRow<Item>] = []
  /// The number of rows in the section; 0 when it does not exist.
  public private(set) var count = 0
  /// The source version shown.
  @ObservationIgnored public private(set) var version: Version
  /// How many positions before and after the window are kept as objects.
  @ObservationIgnored public let margin: Int

  /// The newest state: the window is read from it.
  @ObservationIgnored private var snapshot: Snapshot<Section>
  /// The rows of the window and its margin, by id.
  @ObservationIgnored private var held: [Item.ID: ObservedRow<Item>] = [:]
  @ObservationIgnored private var following: ModelFollowing?
  /// The counter of the source's versions, which `reached(_:)` checks.
  @ObservationIgnored private let counter: VersionCounter

  /// Follows rows `range` of the section `section` of `source`: shows them at once, then applies each
  /// batch.
  /// - Parameters:
  ///   - source: Any source, of any size.
  ///   - section: The section's id.
  ///   - range: The positions shown; clamped to those that exist, and negative bounds count as 0.
  ///   - margin: Positions kept as objects on each side of the window.
  ///   - pacing: How often batches arrive; once per frame by default.
  /// - Complexity: O((*w* + 2*m*) log *n*).
  public init(
    following source: some DataSourceType<Section>, section: Section.ID, range: Range<Int>, margin: Int = 50,
    pacing: Pacing = ObservedList<Section>.framePacing
  ) async {
    let subscription = await source.subscribe(pacing: pacing)
    sectionID = section
    self.range = range.clampedAtZero
    self.margin = max(margin, 0)
    snapshot = subscription.snapshot
    version = subscription.version
    counter = subscription.counter
    readWindow(refreshing: [])
    following = ModelFollowing(subscription) { [weak self] batch in
      guard let self else { return false }
      self.apply(batch)
      return true
    }
  }

  /// Ends the subscription; the window keeps what it shows.
  public func stop() { following?.stop() }

  /// Returns `true` once the window holds `version` or a later one, `false` when it stops first or the
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

  /// Shows rows `range` instead: ``rows`` is assigned once, and rows whose ids stay in the window or its
  /// margin keep their objects.
  /// - Complexity: O((*w* + 2*m*) log *n*) for a window of *w* rows and a margin of *m*.
  public func move(to range: Range<Int>) {
    let range = range.clampedAtZero
    guard range != self.range else { return }
    self.range = range
    readWindow(refreshing: [])
  }

  /// The number of rows held as objects: the window and its margin, within the section.
  package var heldRowCount: Int { held.count }

  // MARK: - Applying

  /// Applies one batch: a change in or before the window (or its margin) reads the window again; a
  /// change after it only changes ``count``; edits of held rows set their items.
  func apply(_ batch: UpdateBatch<Section>) {
    let changeset = batch.changeset
    snapshot = batch.snapshot
    let section = snapshot.index(ofSection: sectionID)
    // Updates include forced refreshes (`refreshItems`): an equal item is set too, and its observers told.
    if changeset.sectionChanges.hasStructuralChanges || reachesWindow(changeset.itemChanges, section: section)
    {
      readWindow(
        refreshing: Set(changeset.itemChanges.updates.lazy.map(\.id).filter { self.held[$0] != nil }))
    } else {
      let newCount = section.map { snapshot.itemCount(inSection: $0) } ?? 0
      if newCount != count { count = newCount }
      for update in changeset.itemChanges.updates {
        guard let row = held[update.id] else { continue }
        row.item = snapshot[update.to]
      }
    }
    version = batch.to
  }

  /// Whether an insert, delete or move in `section` lands at or before the end of the held rows: what
  /// the window shows may shift.
  private func reachesWindow(_ changes: ChangeList<Item.ID, ItemPosition>, section: Int?) -> Bool {
    let end = range.upperBound + margin
    func reaches(_ position: ItemPosition?) -> Bool {
      guard let position else { return false }
      return position.section == section && position.item < end
    }
    for change in changes.deletes where reaches(change.from) { return true }
    for change in changes.inserts where reaches(change.to) { return true }
    for change in changes.moves where reaches(change.from) || reaches(change.to) { return true }
    // A section that comes or goes is a structural change of sections: the caller reads the window then.
    return false
  }

  /// Reads the window and its margin from ``snapshot``, keeping the objects of ids that stay; assigns
  /// ``rows`` and ``count`` only when they change, and sets the items of rows that changed or are in
  /// `refreshing`.
  private func readWindow(refreshing: Set<Item.ID>) {
    guard let section = snapshot.index(ofSection: sectionID) else {
      held = [:]
      if !rows.isEmpty { rows = [] }
      if count != 0 { count = 0 }
      return
    }
    let total = snapshot.itemCount(inSection: section)
    let lower = min(max(range.lowerBound - margin, 0), total)
    let upper = min(range.upperBound + margin, total)
    var next: [Item.ID: ObservedRow<Item>] = [:]
    var shown: [ObservedRow<Item>] = []
    for position in lower..<upper {
      let item = snapshot[ItemPosition(section: section, item: position)]
      let row: ObservedRow<Item>
      if let existing = held[item.id] {
        row = existing
        if existing.item != item || refreshing.contains(item.id) { existing.item = item }
      } else {
        row = ObservedRow(item)
      }
      next[item.id] = row
      if range.contains(position) { shown.append(row) }
    }
    held = next
    if rows.map(\.id) != shown.map(\.id) { rows = shown }
    if count != total { count = total }
  }
}
