// A clock that only moves when a test says so, for deterministic tests of pacing.

import SimpleSource

/// A `Clock` whose time moves only when ``advance(by:)`` is called, or, under a seeded schedule
/// (``exploreSchedules(count:quietPeriod:maxSteps:_:)``), when nothing else can run: then it jumps to its
/// earliest sleeper's deadline, so a test that waits for a deadline neither sleeps nor flakes.
///
/// ```swift
/// let clock = ManualClock()
/// let subscription = await source.subscribe(pacing: .interval(.milliseconds(16), clock: clock))
/// await clock.sleepers(atLeast: 1)      // the subscriber waits out its interval
/// clock.advance(by: .milliseconds(16))   // …and may go on
/// ```
///
/// Needs `Clock` and `Duration`, which Apple platforms have from iOS 16, macOS 13, tvOS 16 and watchOS 9.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
public final class ManualClock: Clock, Sendable {
  /// A point in manual time: the duration since the clock was made.
  public struct Instant: InstantProtocol, CustomStringConvertible {
    /// Time since the clock started.
    public var offset: Duration

    /// Creates an instant.
    public init(offset: Duration) { self.offset = offset }
    /// The instant `duration` later.
    public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
    /// The duration from this instant to `other`.
    public func duration(to other: Instant) -> Duration { other.offset - offset }
    /// Earlier instants are smaller.
    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    /// The offset, as a duration prints.
    public var description: String { "\(offset)" }
  }

  private struct Sleeper: Sendable {
    let id: Int
    let deadline: Instant
    let continuation: CheckedContinuation<Void, any Error>
  }

  private struct State: Sendable {
    var now = Instant(offset: .zero)
    var nextID = 0
    var sleepers: [Sleeper] = []
    var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
  }

  private let state = Locked(State())

  /// Creates a clock at time zero.
  public init() {}

  /// The current manual time.
  public var now: Instant { state.withLock { $0.now } }

  /// Zero: manual time has no resolution limit.
  public var minimumResolution: Duration { .zero }

  /// Suspends until the clock is advanced to `deadline`, or throws `CancellationError` when cancelled.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    if #available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *),
      let schedule = TaskSchedule.host as? ScheduleExecutor
    {
      schedule.watch(self)
    }
    let id = state.withLock { state in
      defer { state.nextID += 1 }
      return state.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let (resumeNow, watchers) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
          if deadline <= state.now || Task.isCancelled { return (true, []) }
          state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
          return (false, Self.takeSatisfiedWatchers(&state))
        }
        for watcher in watchers { watcher.resume() }
        if resumeNow {
          if Task.isCancelled {
            continuation.resume(throwing: CancellationError())
          } else {
            continuation.resume()
          }
        }
      }
    } onCancel: {
      let sleeper = state.withLock { state -> Sleeper? in
        guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
        return state.sleepers.remove(at: index)
      }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Moves time forward and wakes every sleeper whose deadline has passed.
  public func advance(by duration: Duration) {
    let woken = state.withLock { state -> [Sleeper] in
      state.now = state.now.advanced(by: duration)
      let now = state.now
      let woken = state.sleepers.filter { $0.deadline <= now }
      state.sleepers.removeAll { $0.deadline <= now }
      return woken
    }
    for sleeper in woken { sleeper.continuation.resume() }
  }

  /// How long until the earliest sleeper's deadline, or `nil` when nobody sleeps: what a seeded schedule
  /// advances the clock by when nothing else can run.
  package var timeToNextSleeper: Duration? {
    state.withLock { state in
      state.sleepers.map(\.deadline).min().map { state.now.duration(to: $0) }
    }
  }

  /// The number of tasks sleeping on this clock.
  package var sleeperCount: Int { state.withLock { $0.sleepers.count } }

  /// Returns once at least `count` tasks are sleeping on this clock.
  public func sleepers(atLeast count: Int) async {
    await withCheckedContinuation { continuation in
      let ready = state.withLock { state -> Bool in
        if state.sleepers.count >= count { return true }
        state.watchers.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  private static func takeSatisfiedWatchers(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
    let count = state.sleepers.count
    let satisfied = state.watchers.filter { $0.count <= count }.map(\.continuation)
    state.watchers.removeAll { $0.count <= count }
    return satisfied
  }
}
