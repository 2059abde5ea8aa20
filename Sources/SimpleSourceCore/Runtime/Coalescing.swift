// How long a cut waits for mutations that keep arriving, and the decision it makes after each turn.

internal import Dispatch

/// How long a ``BasicDataSource`` lets a batch wait for mutations that keep arriving.
///
/// Before it cuts a batch, the source lets in the writers already waiting for its actor, and keeps doing
/// so, one turn of the actor's queue at a time, while each turn brings new mutations, for at most
/// ``maximumDelay``. A source that nobody is writing to cuts after one turn, so an isolated mutation's
/// batch is not delayed; under a sustained stream of mutations the source cuts about once per
/// ``maximumDelay`` and diff instead of after every few mutations. It never waits while idle: the wait
/// ends at the first turn that brings nothing.
///
/// Fewer, fuller batches are cheaper for everyone: each batch freezes the state (the edits after it copy
/// the paths they touch), is diffed, and wakes every subscriber.
///
/// ```swift
/// let quotes = try BasicDataSource(sections: board, coalescing: Coalescing(maximumDelay: 0.004))
/// ```
public struct Coalescing: Hashable, Sendable {
  /// The longest a cut waits while mutations keep arriving, in seconds; 0 lets in only the writers
  /// already waiting for the actor when the cut is due.
  public var maximumDelay: Double

  /// Creates a policy that waits at most `maximumDelay` seconds. A negative value or NaN counts as 0;
  /// `.infinity` waits, while mutations keep arriving, for as long as they do.
  public init(maximumDelay: Double) { self.maximumDelay = maximumDelay > 0 ? maximumDelay : 0 }

  /// Up to a millisecond: well inside a 120 Hz frame (8 ms), and under load it makes batches of
  /// thousands of mutations instead of tens.
  public static let `default` = Coalescing(maximumDelay: 0.001)

  /// Only the writers already waiting when a cut is due join it.
  public static let immediate = Coalescing(maximumDelay: 0)

  /// ``maximumDelay`` in nanoseconds, `UInt64.max` for a delay past that (584 years) or infinite.
  @inlinable var nanoseconds: UInt64 {
    let nanoseconds = (maximumDelay * 1e9).rounded()
    return nanoseconds < 0x1p64 ? UInt64(nanoseconds) : .max
  }
}

/// The decision a source makes after each turn of its actor's queue while a cut is due: cut now, or let
/// the writers that keep arriving in for one more turn. Pure and synchronous, so it is tested on its
/// own; the publish loop only feeds it the version and the time.
@usableFromInline
struct CoalescingWindow: Sendable {
  /// The version when the last turn ended.
  @usableFromInline var version: Int
  /// The time (nanoseconds of a monotonic clock) after which the cut waits no longer.
  @usableFromInline let deadline: UInt64

  /// A window opened at `version` and time `now` that waits at most `maximumDelay` nanoseconds.
  @inlinable init(version: Int, now: UInt64, maximumDelay: UInt64) {
    self.version = version
    let (sum, overflow) = now.addingReportingOverflow(maximumDelay)
    deadline = overflow ? .max : sum
  }

  /// Whether to cut after a turn that ended at `version` and time `now`: yes when the turn brought no
  /// mutation, or when the deadline has passed.
  @inlinable mutating func shouldCut(afterTurnAt version: Int, now: UInt64) -> Bool {
    defer { self.version = version }
    return version == self.version || now >= deadline
  }
}

/// Nanoseconds of the system's monotonic clock, which every platform the package supports has; under a
/// seeded schedule, the schedule's virtual time, so that coalescing decides the same in every replay.
@usableFromInline func monotonicNanoseconds() -> UInt64 {
  if let schedule = TaskSchedule.host { return schedule.nanoseconds }
  return DispatchTime.now().uptimeNanoseconds
}
