// Runs a test body under many seeded schedules, replays one from its seed, and shrinks a failing one.

import Foundation
import SimpleSource
import Testing

/// A schedule under which a test body failed: how to replay it, and what went wrong.
///
/// ``exploreSchedules(count:quietPeriod:maxSteps:_:)`` throws it; the `.seededSchedules(_:quietPeriod:maxSteps:)`
/// trait records it as an issue. Its description ends with the line that replays it:
/// `SIMPLESOURCE_SCHEDULE_SEED=… swift test --filter …`.
public struct ScheduleFailure: Error, Sendable, CustomStringConvertible {
  /// The shrunk schedule, as `SIMPLESOURCE_SCHEDULE_SEED` takes it: the failing schedule with the fewest
  /// preemptions found (`choices:17=2,42=1`, or `choices:` for the default order, which goes on with the
  /// task that ran last while it can).
  public let schedule: String
  /// The schedule that failed first, as `SIMPLESOURCE_SCHEDULE_SEED` takes it (its seed).
  public let foundSchedule: String
  /// How many schedules ran until one failed, counting the failing one.
  public let schedulesUntilFound: Int
  /// The shrunk schedule's preemptions: the steps where it left the task that ran last while that task had
  /// a job ready.
  public let preemptions: Int
  /// The hash of the shrunk schedule's trace: a replay of ``schedule`` gives the same one.
  public let traceHash: String
  /// What went wrong: the error the body threw, the issues it recorded, a deadlock or a run too long.
  public let reason: String
  /// For a deadlock, what each task that had not returned awaited, one line per task; otherwise empty.
  public let awaited: [String]

  /// The failing schedule, the shrunk one and the line that replays it.
  public var description: String {
    var lines = [
      "failed under schedule \(foundSchedule), found after \(schedulesUntilFound) schedules: \(reason)"
    ]
    lines += awaited.map { "  \($0)" }
    lines.append(
      "shrunk to \(schedule) (\(preemptions) preemptions, trace \(traceHash)); replay with "
        + "\(scheduleSeedVariable)=\(schedule)")
    return lines.joined(separator: "\n")
  }
}

/// The environment variable that replays one schedule: a seed, or a shrunk `choices:…` schedule.
let scheduleSeedVariable = "SIMPLESOURCE_SCHEDULE_SEED"
/// The environment variable that multiplies every exploration's count (CI runs more schedules).
let scheduleScaleVariable = "SIMPLESOURCE_SCHEDULE_SCALE"

/// Runs `body` under `count` seeded schedules, one after another, and throws the first failing one, shrunk.
///
/// Under a schedule, every job of the body's task, of its child tasks, of the actors they call (default
/// actors run on the executor their caller prefers) and of the tasks started with
/// `Task.schedulable(_:priority:operation:)` (every task the package starts) runs one at a time on one
/// thread; the schedule chooses which ready job runs next. A ``ManualClock`` slept on during the run moves
/// to its next deadline when nothing else can run, so waits for time neither sleep nor flake.
///
/// - The schedules' seeds come from the process's seed (`SIMPLESOURCE_SEED`, printed), and take three
///   strategies in turn: a random walk (every next job uniform among the ready ones); priorities, as PCT
///   draws them (each task a random priority, the highest runs, at most 3 random changes, so a task can be
///   starved for as long as a bug needs); and few preemptions (on with the task that ran last, except at most 3
///   times). `SIMPLESOURCE_SCHEDULE_SCALE=k` runs `k * count` schedules (CI sets it).
/// - A schedule fails when the body throws, records an issue (under Swift Testing), runs `maxSteps` steps,
///   or deadlocks: nothing can run, no manual clock has a sleeper, nothing arrives from outside the schedule
///   for `quietPeriod`, and the body has not returned. A deadlock is reported with what each task awaits;
///   the body is then cancelled, and the call returns once it has unwound.
/// - A failing schedule is shrunk: its choices that differ from the default are taken away, a chunk at a
///   time, while it still fails, which leaves the fewest preemptions this search finds.
///   The result names the shrunk schedule; `SIMPLESOURCE_SCHEDULE_SEED=<schedule>` replays it alone (and
///   `SWIFT_DETERMINISTIC_HASHING=1` makes a replay in another process take the same steps when the code
///   under test iterates sets or dictionaries).
/// - Outside the schedule's control: the main actor, tasks started with `Task { }` or `Task.detached`, other
///   threads and dispatch queues, real clocks and real I/O. Work there runs as usual; its wake-ups reach the
///   schedule when they come, so a test that depends on them is not deterministic.
///
/// ```swift
/// try await exploreSchedules(count: 100) {
///   let counter = Counter()
///   async let first: Void = counter.increment()
///   async let second: Void = counter.increment()
///   _ = await (first, second)
///   guard await counter.value == 2 else { throw LostUpdate() }
/// }
/// ```
///
/// - Parameters:
///   - count: How many schedules to run (times `SIMPLESOURCE_SCHEDULE_SCALE` when it is set); none when it
///     is not positive.
///   - quietPeriod: How long an idle run waits for a wake from outside the schedule before it calls
///     the state a deadlock.
///   - maxSteps: The most jobs one schedule runs before it fails as too long.
///   - body: The test: called once per schedule, and again while shrinking.
/// - Throws: ``ScheduleFailure`` for the first failing schedule, shrunk.
/// - Complexity: `count` runs of `body`, plus up to 100 more to shrink a failure.
@available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
public func exploreSchedules(
  count: Int, quietPeriod: Duration = .seconds(2), maxSteps: Int = 1_000_000,
  _ body: @Sendable () async throws -> Void
) async throws {
  let environment = ProcessInfo.processInfo.environment
  let scale = environment[scheduleScaleVariable].flatMap(Int.init).map { max($0, 1) } ?? 1
  try await exploreSchedules(
    count: count * scale, limits: ScheduleExecutor.Limits(quietPeriod: quietPeriod, maxSteps: maxSteps),
    replaying: environment[scheduleSeedVariable], body)
}

/// Runs `body` under `total` schedules, or only under `replaying` when it is given.
@available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
func exploreSchedules(
  count total: Int, limits: ScheduleExecutor.Limits, replaying: String?,
  _ body: @Sendable () async throws -> Void
) async throws {
  if let text = replaying {
    guard let plan = SchedulePlan(text) else {
      throw ScheduleFailure(
        schedule: text, foundSchedule: text, schedulesUntilFound: 0, preemptions: 0, traceHash: "",
        reason: "\(scheduleSeedVariable)=\(text) is neither a seed nor a list of choices (choices:17=2,42=1)",
        awaited: [])
    }
    let attempt = await attemptSchedule(plan, body: body, limits: limits)
    if let failure = attempt.failure {
      // Thrown, not printed: the failure says the schedule, its trace and why.
      throw ScheduleFailure(
        schedule: plan.description, foundSchedule: plan.description, schedulesUntilFound: 1,
        preemptions: attempt.trace.preemptions, traceHash: attempt.trace.hashText, reason: failure.reason,
        awaited: failure.awaited)
    }
    print("replayed schedule \(plan): trace \(attempt.trace.hashText), passed")
    return
  }
  var first: String?
  for index in 0..<max(total, 0) {
    let plan = SchedulePlan(seed: scheduleSeed(index))
    let attempt = await attemptSchedule(plan, body: body, limits: limits)
    if first == nil { first = "\(plan) (trace \(attempt.trace.hashText))" }
    guard let failure = attempt.failure else { continue }
    let shrunk = await shrink(attempt.trace, failure: failure, body: body, limits: limits)
    throw ScheduleFailure(
      schedule: shrunk.plan.description, foundSchedule: plan.description, schedulesUntilFound: index + 1,
      preemptions: shrunk.trace.preemptions, traceHash: shrunk.trace.hashText, reason: shrunk.failure.reason,
      awaited: shrunk.failure.awaited)
  }
  print(
    "explored \(total) schedules, all passed; the first: \(first ?? "none") (SIMPLESOURCE_SEED=\(RandomTestSettings.runSeed))"
  )
}

/// The seed of the `index`th schedule of this process: the process's seed mixed with the index, with the
/// index's remainder modulo 3, so explorations take the three strategies of ``SchedulePlan`` in turn.
func scheduleSeed(_ index: Int) -> UInt64 {
  var mixer = SeededGenerator(seed: RandomTestSettings.runSeed ^ (UInt64(index) &* 0x9FB2_1C65_1E98_DF25))
  return mixer.next() / 3 * 3 + UInt64(index % 3)
}

/// Why one schedule failed.
struct AttemptFailure: Sendable {
  let reason: String
  let awaited: [String]
}

/// Runs `body` once under `plan`; under Swift Testing, the issues it records count as its failure and are
/// held back (as known issues) so that shrinking's runs do not fail the test one by one.
@available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
func attemptSchedule(
  _ plan: SchedulePlan, body: @Sendable () async throws -> Void, limits: ScheduleExecutor.Limits
) async -> (failure: AttemptFailure?, trace: ScheduleTrace) {
  let executor = ScheduleExecutor()
  let issues = Locked<[String]>([])
  let ended = Locked<(end: ScheduleEnd, trace: ScheduleTrace)?>(nil)
  if Test.current != nil {
    await withKnownIssue(isIntermittent: true) {
      let result = await executor.run(body, plan: plan, limits: limits)
      ended.withLock { $0 = result }
    } matching: { issue in
      issues.withLock { $0.append(issue.description) }
      return true
    }
  } else {
    let result = await executor.run(body, plan: plan, limits: limits)
    ended.withLock { $0 = result }
  }
  guard let (end, trace) = ended.withLock({ $0 }) else {
    return (
      AttemptFailure(reason: issues.withLock { $0 }.joined(separator: "; "), awaited: []), ScheduleTrace()
    )
  }
  let recorded = issues.withLock { $0 }
  switch end {
  case .deadlock(let awaited):
    return (
      AttemptFailure(reason: "deadlock: nothing can run and the body has not returned", awaited: awaited),
      trace
    )
  case .tooManySteps(let steps):
    return (AttemptFailure(reason: "the body had not returned after \(steps) steps", awaited: []), trace)
  case .returned(let error?):
    return (AttemptFailure(reason: "threw \(error)", awaited: []), trace)
  case .returned(nil) where !recorded.isEmpty:
    return (AttemptFailure(reason: "recorded " + recorded.joined(separator: "; "), awaited: []), trace)
  case .returned(nil):
    return (nil, trace)
  }
}

/// Takes a failing schedule's explicit choices away, a chunk at a time, while it still fails (at most 100 runs).
@available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
func shrink(
  _ trace: ScheduleTrace, failure: AttemptFailure, body: @Sendable () async throws -> Void,
  limits: ScheduleExecutor.Limits
) async -> (plan: SchedulePlan, trace: ScheduleTrace, failure: AttemptFailure) {
  var kept = trace.choices.sorted { $0.key < $1.key }
  var best = (
    plan: SchedulePlan(choices: Dictionary(uniqueKeysWithValues: kept)), trace: trace, failure: failure
  )
  var runs = 0
  var chunk = max(kept.count / 2, 1)
  while !kept.isEmpty, runs < 100 {
    var start = 0
    var removed = false
    while start < kept.count, runs < 100 {
      var candidate = kept
      candidate.removeSubrange(start..<min(start + chunk, kept.count))
      let plan = SchedulePlan(choices: Dictionary(uniqueKeysWithValues: candidate))
      let attempt = await attemptSchedule(plan, body: body, limits: limits)
      runs += 1
      if let failed = attempt.failure {
        kept = candidate
        best = (plan, attempt.trace, failed)
        removed = true
      } else {
        start += chunk
      }
    }
    if !removed {
      if chunk == 1 { break }
      chunk = max(chunk / 2, 1)
    }
  }
  return best
}
