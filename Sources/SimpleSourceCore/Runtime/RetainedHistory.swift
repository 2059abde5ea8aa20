// The versions a source keeps so that a subscriber that comes back resumes from the version it holds.

/// How much history a source retains for subscribers that resume from a version they hold (G11).
///
/// A source keeps every version it offered within both bounds: at most ``versions`` versions, and at most
/// about ``bytes`` bytes of what it holds to rebuild them. It keeps a version as the *changes* that made
/// it (the batch's ``UpdateBatch/edits``: each changed item, and the ids that place it), not as a snapshot,
/// plus a snapshot to rebuild from every list's worth of changes and at the oldest version. So a version
/// made by *k* changes costs about *k* items, not the *k* B-tree leaves (of 64 items each) its snapshot
/// holds alone; a whole replacement costs one list. The newest version is always retained.
///
/// ```swift
/// let source = try BasicDataSource(sections: sections, history: HistoryLimit(versions: 100))
/// ```
///
/// A resume from a retained version rebuilds its state from the nearest snapshot at or before it, in
/// O(*e* log *n*) for the *e* changes between them (*e* at most about the list's size *n*), outside the
/// source's locks.
public struct HistoryLimit: Hashable, Sendable {
  /// The most versions retained, the newest included; at least 1.
  public var versions: Int
  /// The most bytes the retained versions hold, estimated: their changes and the snapshots kept to
  /// rebuild from.
  public var bytes: Int

  /// Creates a limit.
  /// - Parameters:
  ///   - versions: The most versions retained, at least 1.
  ///   - bytes: The most bytes they hold, estimated.
  @inlinable
  public init(versions: Int = 65_536, bytes: Int = 64 << 20) {
    self.versions = max(versions, 1)
    self.bytes = max(bytes, 0)
  }

  /// 65,536 versions within 64 MiB: more than a minute of a thousand batches a second of a few changed
  /// items each (a 60,000-item list of seven fields, 3,000 changes a second), hours of ten batches a
  /// second; a few versions of a 100,000-item source that is replaced whole.
  public static let `default` = HistoryLimit()

  /// Only the newest version: a subscriber resumes only when it holds that one; otherwise it resets.
  public static let newest = HistoryLimit(versions: 1, bytes: 0)
}

/// What a subscriber that asked to resume from a version gets (G11).
public enum Resumption<Section: SectionType>: Sendable {
  /// The source retained the version: the subscription's ``Subscription/snapshot`` is the state at that
  /// version, which the subscriber already holds, and its batches start exactly there.
  case resumed(Subscription<Section>)
  /// The version is no longer retained, was never offered, or is in the future: the subscriber must
  /// drop what it holds and take the subscription's ``Subscription/snapshot`` instead.
  case reset(Subscription<Section>)

  /// The subscription, either way.
  @inlinable
  public var subscription: Subscription<Section> {
    switch self {
    case .resumed(let subscription), .reset(let subscription): subscription
    }
  }

  /// Whether the subscriber keeps what it holds.
  @inlinable
  package var isResumed: Bool {
    if case .resumed = self { true } else { false }
  }
}

/// The retained versions of one source: a synchronous state machine, run under the hub's lock.
///
/// Each entry is a version a batch led to (or the first), the ids that batch changed
/// (``UpdateBatch/touchedIDs``), and what it takes to rebuild the state at that version: the batch's edits
/// by id (``UpdateBatch/edits``), or the snapshot itself. Snapshots are kept only where they pay:
///
/// - the newest entry's (the source's state),
/// - the oldest entry's (the base every rebuild may start from; when the oldest entry is forgotten, the
///   next one's state is made from it by that entry's edits),
/// - a *checkpoint* each time the edits since the last one reach the size of the list, so that a rebuild
///   applies at most about *n* edits; and every entry whose batch the edits could not follow (a gap in
///   versions, or a batch that changed about as much as the list holds).
///
/// A version made by *k* changes costs its *k* edits, not the *k* B-tree leaves that its snapshot holds
/// alone (about 64 items each), so the same bytes keep one to two orders of magnitude more history under
/// scattered edits. A subscriber resuming from an entry is caught up by one batch derived from the ids
/// changed since, or a full diff when some batch did not say.
@usableFromInline
struct RetainedHistory<Section: SectionType>: Sendable {
  @usableFromInline typealias ItemID = Section.Item.ID

  @usableFromInline
  struct Entry: Sendable {
    @usableFromInline let version: Int
    /// The state at ``version``, when this entry keeps it (see the type's summary).
    @usableFromInline var snapshot: Snapshot<Section>?
    /// The edits from the previous entry's state to this one's; empty for a checkpoint (a rebuild never
    /// crosses a snapshot it could start from).
    @usableFromInline var edits: [BatchEdit<Section>]
    /// Whether ``snapshot`` stays while the entry does.
    @usableFromInline let isCheckpoint: Bool
    /// The ids changed by the batch that led here from the previous entry; `nil` when unknown.
    @usableFromInline let touched: Set<ItemID>?
    /// The ids that batch refreshed although `==` saw no change (``Changeset/forcedRefreshes``).
    @usableFromInline let refreshing: Set<ItemID>
    /// What this entry holds, estimated: its edits and ids, and its snapshot when it is a checkpoint.
    @usableFromInline let bytes: Int

    @inlinable
    init(
      version: Int, snapshot: Snapshot<Section>?, edits: [BatchEdit<Section>], isCheckpoint: Bool,
      touched: Set<ItemID>?, refreshing: Set<ItemID>, bytes: Int
    ) {
      self.version = version
      self.snapshot = snapshot
      self.edits = edits
      self.isCheckpoint = isCheckpoint
      self.touched = touched
      self.refreshing = refreshing
      self.bytes = bytes
    }

    /// What a forgotten entry leaves in the dead prefix: its version, nothing it held.
    @inlinable
    var hollowed: Entry {
      Entry(
        version: version, snapshot: nil, edits: [], isCheckpoint: false, touched: nil, refreshing: [],
        bytes: 0)
    }
  }

  /// The way to the state at a retained version: a snapshot, and the edits of each later entry up to it.
  @usableFromInline
  struct Rebuild: Sendable {
    @usableFromInline let base: Snapshot<Section>
    @usableFromInline let steps: [[BatchEdit<Section>]]

    @inlinable init(base: Snapshot<Section>, steps: [[BatchEdit<Section>]]) {
      (self.base, self.steps) = (base, steps)
    }

    /// The state: the base with every step's edits made by `apply`, in order; `nil` if an edit does not
    /// apply, which a history that recorded only its own batches never finds.
    /// - Complexity: O(*e* log *n*) for the *e* edits of the steps.
    @inlinable
    func state(
      applying apply: (Snapshot<Section>, [BatchEdit<Section>]) -> Snapshot<Section>? = {
        try? $0.applying($1)
      }
    ) -> Snapshot<Section>? {
      var state = base
      for edits in steps {
        guard let next = apply(state, edits) else { return nil }
        state = next
      }
      return state
    }
  }

  @usableFromInline let limit: HistoryLimit
  /// Oldest first; never empty. `entries[start...]` are live; the dead prefix holds hollow entries and is
  /// compacted in bulk.
  @usableFromInline var entries: [Entry]
  @usableFromInline var start = 0
  /// The bytes of the live entries, plus the oldest one's snapshot when it is not a checkpoint.
  @usableFromInline var bytes = 0
  /// The edits recorded since the newest checkpoint (or the base).
  @usableFromInline var editsSinceCheckpoint = 0
  /// The version of the newest recorded batch's end (or the first): the newest state holds from it on,
  /// through the versions recorded unchanged after it.
  @usableFromInline var unchangedSince: Int

  /// How a version is rebuilt from edits: ``Differ/applyEdits``, specialised where the source was made.
  @usableFromInline let applyEdits: @Sendable (Snapshot<Section>, [BatchEdit<Section>]) -> Snapshot<Section>?

  @inlinable
  init(
    version: Int, snapshot: Snapshot<Section>, limit: HistoryLimit,
    applyEdits: @escaping @Sendable (Snapshot<Section>, [BatchEdit<Section>]) -> Snapshot<Section>? = {
      try? $0.applying($1)
    }
  ) {
    self.limit = limit
    self.applyEdits = applyEdits
    entries = [
      Entry(
        version: version, snapshot: snapshot, edits: [], isCheckpoint: true, touched: nil, refreshing: [],
        bytes: Self.snapshotBytes(snapshot))
    ]
    bytes = entries[0].bytes
    unchangedSince = version
  }

  /// The retained versions, oldest first.
  @inlinable
  var versions: [Int] { entries[start...].map(\.version) }

  /// Whether the history keeps more than the newest version, so that batches' edits are worth making.
  @inlinable
  var keepsVersions: Bool { limit.versions > 1 && limit.bytes > 0 }

  /// Records the batch that made the newest version, its edits by id (`nil`: keep its snapshot instead)
  /// and the ids it force-refreshed, and forgets the oldest versions beyond the limit, releasing what they
  /// held at once.
  /// - Complexity: O(1) amortised, plus freeing what the forgotten versions held alone, plus O(*e* log *n*)
  ///   to make the new oldest entry's state from the *e* edits that led to it, when it kept none.
  @inlinable
  mutating func record(
    _ batch: UpdateBatch<Section>, edits: [BatchEdit<Section>]?, refreshing: Set<ItemID> = []
  ) {
    let previous = entries.count - 1
    // A gap in versions: the edits lead from a state this history does not hold. A batch from a version
    // reached without one (``recordUnchanged(at:)``) starts from the same state as one from the last
    // batch's end.
    let follows =
      entries[previous].version == batch.fromNumber
      || (entries[previous].touched == [] && unchangedSince <= batch.fromNumber
        && batch.fromNumber <= entries[previous].version)
    let editCount = edits?.count ?? 0
    let isCheckpoint =
      edits == nil || !follows
      || editsSinceCheckpoint + editCount >= max(batch.snapshot.itemCount, Self.minimumCheckpointEdits)
    let touched = batch.touchedIDs
    let ids = (touched?.count ?? 0) + refreshing.count
    let entry = Entry(
      version: batch.toNumber, snapshot: batch.snapshot, edits: isCheckpoint ? [] : edits ?? [],
      isCheckpoint: isCheckpoint, touched: touched, refreshing: refreshing,
      bytes: Self.entryOverhead + ids * Self.idBytes
        + (isCheckpoint ? Self.snapshotBytes(batch.snapshot) : editCount * Self.editBytes))
    editsSinceCheckpoint = isCheckpoint ? 0 : editsSinceCheckpoint + editCount
    unchangedSince = batch.toNumber
    // The previous newest state is kept only by a checkpoint or the base.
    if previous > start, !entries[previous].isCheckpoint { entries[previous].snapshot = nil }
    append(entry)
  }

  /// Appends the newest entry, forgets the oldest beyond the limit, and compacts the dead prefix in bulk.
  /// - Complexity: O(1) amortised, plus what ``forgetOldest()`` costs.
  @inlinable
  mutating func append(_ entry: Entry) {
    entries.append(entry)
    bytes += entry.bytes
    while entries.count - start > limit.versions || (bytes > limit.bytes && entries.count - start > 1) {
      forgetOldest()
    }
    if start > 64, start * 2 > entries.count {
      entries.removeFirst(start)
      start = 0
    }
  }

  /// Records that the source reached `version` with no batch: its state is the newest one recorded (the
  /// mutations since cancelled out, or changed nothing this source shows). A subscriber holds such a
  /// version once it holds the state before it (G13), so it may resume from it too.
  /// - Complexity: O(1) amortised, as ``record(_:edits:refreshing:)``.
  @inlinable
  mutating func recordUnchanged(at version: Int) {
    let previous = entries.count - 1
    guard version > entries[previous].version else { return }
    let state = entries[previous].snapshot
    if previous > start, !entries[previous].isCheckpoint { entries[previous].snapshot = nil }
    let entry = Entry(
      version: version, snapshot: state, edits: [], isCheckpoint: false, touched: [], refreshing: [],
      bytes: Self.entryOverhead)
    append(entry)
  }

  /// Forgets the oldest live entry. The next one becomes the base: its state is made from the forgotten
  /// one's by its edits when it kept none, and counts from then on unless it is a checkpoint (counted
  /// already).
  @inlinable
  mutating func forgetOldest() {
    let oldest = entries[start]
    bytes -= oldest.bytes + Self.baseBytes(of: oldest)
    entries[start] = oldest.hollowed
    start += 1
    if entries[start].snapshot == nil, let base = oldest.snapshot {
      guard let state = applyEdits(base, entries[start].edits) else {
        assertionFailure("RetainedHistory: a recorded batch's edits did not apply to the state before it")
        // Never reached; if it were, the versions up to the next snapshot could not be rebuilt.
        while entries[start].snapshot == nil {
          bytes -= entries[start].bytes
          entries[start] = entries[start].hollowed
          start += 1
        }
        bytes += Self.baseBytes(of: entries[start])
        return
      }
      entries[start].snapshot = state
      entries[start].edits = []
    }
    bytes += Self.baseBytes(of: entries[start])
  }

  /// What the base's snapshot adds to its entry's bytes: nothing for a checkpoint, which counts it.
  @inlinable
  static func baseBytes(of entry: Entry) -> Int {
    entry.isCheckpoint ? 0 : entry.snapshot.map(snapshotBytes) ?? 0
  }

  /// The way to the state at `version`: the nearest kept snapshot at or before it, and the edits since;
  /// `nil` when not retained. Made under the hub's lock; the edits are applied after it is released.
  /// - Complexity: O(log *v*) to find the version among *v* retained, then O(*m*) for the *m* entries
  ///   since the snapshot (the edits are shared, not copied).
  @inlinable
  func rebuild(to version: Int) -> Rebuild? {
    guard let index = index(of: version) else { return nil }
    var first = index
    while first > start, entries[first].snapshot == nil { first -= 1 }
    guard let base = entries[first].snapshot else { return nil }
    return Rebuild(base: base, steps: entries[(first + 1)..<(index + 1)].map(\.edits))
  }

  /// What changed since `version`: the ids changed (`nil` when some batch since did not say or they are
  /// too many to beat a full diff), and the ids the batches since force-refreshed, which a catch-up must
  /// refresh as a lagging subscriber's does; `nil` when not retained.
  /// - Complexity: O(log *v*) to find the version among *v* retained, then O(*k*) for the *k* ids changed
  ///   or refreshed since (the changed ones stop counting once they pass a sixteenth of the list).
  @inlinable
  func changes(since version: Int) -> (touched: Set<ItemID>?, refreshing: Set<ItemID>)? {
    guard let low = index(of: version) else { return nil }
    let newestCount = entries[entries.count - 1].snapshot?.itemCount ?? 0
    var touched: Set<ItemID>? = []
    var refreshing = Set<ItemID>()
    for entry in entries[(low + 1)...] where !entry.refreshing.isEmpty {
      refreshing.formUnion(entry.refreshing)
    }
    for entry in entries[(low + 1)...] {
      guard let ids = entry.touched, var union = touched else {
        touched = nil
        break
      }
      union.formUnion(ids)
      touched = UpdateBatch<Section>.isWorthLogging(union.count, of: newestCount) ? union : nil
      if touched == nil { break }
    }
    return (touched, refreshing)
  }

  /// Where a subscriber holding `version` resumes: its state, rebuilt, and ``changes(since:)``; `nil`
  /// when not retained. (The hub rebuilds outside its lock; this is the same in one call.)
  /// - Complexity: ``rebuild(to:)``, the rebuild's edits, and ``changes(since:)``.
  @inlinable
  func start(from version: Int) -> (
    snapshot: Snapshot<Section>, touched: Set<ItemID>?, refreshing: Set<ItemID>
  )? {
    guard let snapshot = rebuild(to: version)?.state(applying: applyEdits),
      let changes = changes(since: version)
    else {
      return nil
    }
    return (snapshot, changes.touched, changes.refreshing)
  }

  /// The index of the live entry of `version`, by binary search.
  @inlinable
  func index(of version: Int) -> Int? {
    var low = start
    var high = entries.count
    while low < high {
      let middle = (low + high) / 2
      if entries[middle].version < version { low = middle + 1 } else { high = middle }
    }
    return low < entries.count && entries[low].version == version ? low : nil
  }

  /// Edits between checkpoints in a small list: below this, a checkpoint would cost more than it saves.
  @inlinable static var minimumCheckpointEdits: Int { 256 }

  /// What an entry costs beyond its edits and ids: the entry, its arrays' and sets' headers.
  @inlinable static var entryOverhead: Int { 256 }

  /// What one id in a set of changed or refreshed ids costs.
  @inlinable static var idBytes: Int { MemoryLayout<ItemID>.stride + 16 }

  /// What one edit costs: the edit (its largest case holds an item and a place) and its share of the array.
  @inlinable static var editBytes: Int { MemoryLayout<BatchEdit<Section>>.stride + 8 }

  /// What a snapshot kept beside the newest costs at most: every item, its id's index entry and its share
  /// of the B-tree's nodes. (Checkpoints are a list's worth of edits apart, which touch nearly every leaf,
  /// so a kept snapshot shares little with the newest.)
  @inlinable
  static func snapshotBytes(_ snapshot: Snapshot<Section>) -> Int {
    snapshot.itemCount * (MemoryLayout<Section.Item>.stride + MemoryLayout<ItemID>.stride + 24)
      + snapshot.sectionCount * (MemoryLayout<Section>.stride + 64)
  }
}
