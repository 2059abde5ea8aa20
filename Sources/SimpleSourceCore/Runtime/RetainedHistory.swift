// The versions a source keeps so that a subscriber that comes back resumes from the version it holds.

/// How much history a source retains for subscribers that resume from a version they hold (G11).
///
/// A source keeps the snapshot of each of its newest offered versions, and the ids each batch changed,
/// within both bounds: at most ``versions`` versions, and at most about ``bytes`` bytes of what those
/// versions hold beyond one another. Snapshots made by edits share all but the edited paths with the
/// version before them, so a version made by *k* edits counts about *k* B-tree leaves; a whole
/// replacement counts its whole list. The newest version is always retained.
///
/// ```swift
/// let source = try BasicDataSource(sections: sections, history: HistoryLimit(versions: 100))
/// ```
public struct HistoryLimit: Hashable, Sendable {
  /// The most versions retained, the newest included; at least 1.
  public var versions: Int
  /// The most bytes the retained versions hold beyond the newest, estimated.
  public var bytes: Int

  /// Creates a limit.
  /// - Parameters:
  ///   - versions: The most versions retained, at least 1.
  ///   - bytes: The most bytes they hold beyond the newest, estimated.
  @inlinable
  public init(versions: Int = 1024, bytes: Int = 64 << 20) {
    self.versions = max(versions, 1)
    self.bytes = max(bytes, 0)
  }

  /// 1,024 versions within 64 MiB: a minute of ten batches a second from a source that edits,
  /// a few versions of a 100,000-item source that is replaced whole.
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
/// Each entry is a version a batch led to (or the first), its snapshot, and the ids that batch changed
/// (``UpdateBatch/touchedIDs``), so a subscriber resuming from an entry is caught up by one batch derived
/// from the ids changed since, or a full diff when some batch did not say.
@usableFromInline
struct RetainedHistory<Section: SectionType>: Sendable {
  @usableFromInline typealias ItemID = Section.Item.ID

  @usableFromInline
  struct Entry: Sendable {
    @usableFromInline let version: Int
    @usableFromInline let snapshot: Snapshot<Section>
    /// The ids changed by the batch that led here from the previous entry; `nil` when unknown.
    @usableFromInline let touched: Set<ItemID>?
    /// The ids that batch refreshed although `==` saw no change (``Changeset/forcedRefreshes``).
    @usableFromInline let refreshing: Set<ItemID>
    /// What this entry holds beyond the previous one, estimated.
    @usableFromInline let bytes: Int

    @inlinable
    init(
      version: Int, snapshot: Snapshot<Section>, touched: Set<ItemID>?, refreshing: Set<ItemID> = [],
      bytes: Int
    ) {
      self.version = version
      self.snapshot = snapshot
      self.touched = touched
      self.refreshing = refreshing
      self.bytes = bytes
    }
  }

  @usableFromInline let limit: HistoryLimit
  /// Oldest first; never empty. `entries[start...]` are live; the dead prefix holds hollow entries (see
  /// ``hollow``) and is compacted in bulk.
  @usableFromInline var entries: [Entry]
  @usableFromInline var start = 0
  /// The bytes of the live entries but the oldest (whose own cost is then shared by nothing older).
  @usableFromInline var bytes = 0
  /// An empty snapshot that every forgotten entry holds in place of its own, so that what a version held
  /// is released as soon as the limit forgets it, not when the dead prefix is next compacted.
  @usableFromInline let hollow = Snapshot<Section>()

  @inlinable
  init(version: Int, snapshot: Snapshot<Section>, limit: HistoryLimit) {
    self.limit = limit
    entries = [Entry(version: version, snapshot: snapshot, touched: nil, bytes: 0)]
  }

  /// The retained versions, oldest first.
  @inlinable
  var versions: [Int] { entries[start...].map(\.version) }

  /// Records the batch that made the newest version and the ids it force-refreshed, and forgets the oldest versions beyond the limit,
  /// releasing what they held at once.
  /// - Complexity: O(1) amortised, plus freeing what the forgotten versions held alone.
  @inlinable
  mutating func record(_ batch: UpdateBatch<Section>, refreshing: Set<ItemID> = []) {
    let touched = batch.touchedIDs
    let entry = Entry(
      version: batch.to, snapshot: batch.snapshot, touched: touched, refreshing: refreshing,
      bytes: Self.estimatedBytes(of: batch.snapshot, touched: touched) + refreshing.count * 64)
    entries.append(entry)
    bytes += entry.bytes
    while entries.count - start > limit.versions || (bytes > limit.bytes && entries.count - start > 1) {
      entries[start] = Entry(version: entries[start].version, snapshot: hollow, touched: nil, bytes: 0)
      start += 1
      bytes -= entries[start].bytes
    }
    if start > 64, start * 2 > entries.count {
      entries.removeFirst(start)
      start = 0
    }
  }

  /// Where a subscriber holding `version` resumes: its snapshot, the ids changed since (`nil` when some
  /// batch since did not say or they are too many to beat a full diff), and the ids the batches since
  /// force-refreshed, which a catch-up must refresh as a lagging subscriber's does; `nil` when not
  /// retained.
  /// - Complexity: O(log *v*) to find the version among *v* retained, then O(*k*) for the *k* ids changed
  ///   or refreshed since (the changed ones stop counting once they pass a sixteenth of the list).
  @inlinable
  func start(from version: Int) -> (
    snapshot: Snapshot<Section>, touched: Set<ItemID>?, refreshing: Set<ItemID>
  )? {
    var low = start
    var high = entries.count
    while low < high {
      let middle = (low + high) / 2
      if entries[middle].version < version { low = middle + 1 } else { high = middle }
    }
    guard low < entries.count, entries[low].version == version else { return nil }
    let newestCount = entries[entries.count - 1].snapshot.itemCount
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
    return (entries[low].snapshot, touched, refreshing)
  }

  /// About what a version holds beyond the previous one: one B-tree leaf and a few inner nodes per
  /// changed id when the ids are known (the rest is shared), the whole list otherwise.
  @inlinable
  static func estimatedBytes(of snapshot: Snapshot<Section>, touched: Set<ItemID>?) -> Int {
    let itemBytes = MemoryLayout<Section.Item>.stride + 8
    guard let touched else { return snapshot.itemCount * (itemBytes + MemoryLayout<ItemID>.stride + 16) }
    return touched.count * (64 * itemBytes + 2048)
  }
}
