// The task executor that runs one seeded schedule: every job of a test, one at a time, on one thread.

import Dispatch
import Foundation
import SimpleSource

/// How one schedule's run ended.
enum ScheduleEnd: Sendable {
  /// The body returned; `error` is what it threw, if it threw.
  case returned(error: (any Error)?)
  /// Nothing could run, no virtual time was left to pass, nothing came from outside the schedule for the
  /// quiet period, and the body had not returned. One line per task: what it awaits.
  case deadlock(awaited: [String])
  /// The body had not returned after this many steps.
  case tooManySteps(Int)
}

/// Runs every job of a test's tasks, and of the tasks they start through `Task.schedulable`, one at a time
/// on a thread of its own, choosing each next job by a ``SchedulePlan``.
///
/// Guard map: `state` (its lock) guards the ready jobs, the phase, and the running tasks and waits;
/// `clocks` (its lock) the manual clocks slept on during the run; `virtualTime` (its lock) the time the
/// package's own clock reads under the schedule; the chooser and the trace belong to the
/// driver thread (locals of ``drive(plan:limits:)``). A job runs outside every lock.
@available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
final class ScheduleExecutor: TaskExecutor, TaskScheduleHost, Sendable {
  private let state = Locked(ScheduleState<ScheduledJob>())
  private let clocks = Locked<[ManualClock]>([])
  private let virtualTime = Locked<UInt64>(0)
  private let wake = DispatchSemaphore(value: 0)
  /// Runs the jobs of a run that is over, one at a time, as they come.
  private let released = DispatchQueue(label: "SimpleSourceTesting.ScheduleExecutor.released")

  var taskExecutor: any TaskExecutor { self }

  /// Virtual time: it moves only when a manual clock jumps to its next sleeper, by as much.
  var nanoseconds: UInt64 { virtualTime.withLock { $0 } }

  func enqueue(_ job: consuming ExecutorJob) {
    let task = ScheduledJob.taskNumber(in: job.description)
    let job = ScheduledJob(job: UnownedJob(job), task: task)
    switch state.withLock({ $0.enqueue(job) }) {
    case .wakeDriver:
      wake.signal()
    case .runReleased(let job):
      runReleased([job])
    }
  }

  private func runReleased(_ jobs: [ScheduledJob]) {
    guard !jobs.isEmpty else { return }
    let executor = asUnownedTaskExecutor()
    released.async {
      for scheduled in jobs {
        scheduled.job.runSynchronously(on: executor)
        self.state.withLock { $0.releasedJobRan() }
      }
    }
  }

  func taskStarted(_ name: String) -> Int { state.withLock { $0.taskStarted(name) } }
  func taskFinished(_ task: Int) { state.withLock { $0.taskFinished(task) } }
  func waitBegan(_ label: String, task: Int) -> Int { state.withLock { $0.waitBegan(label, task: task) } }
  func waitEnded(_ wait: Int) { state.withLock { $0.waitEnded(wait) } }

  /// A manual clock was slept on: it joins the clocks whose time passes when nothing else can run.
  func watch(_ clock: ManualClock) {
    clocks.withLock { clocks in
      if !clocks.contains(where: { $0 === clock }) { clocks.append(clock) }
    }
  }

  /// The limits of one run.
  struct Limits: Sendable {
    var quietPeriod: Duration
    var maxSteps: Int
  }

  /// Runs `body` under `plan`: its task and every task it starts through the package, one job at a time.
  /// Returns how the run ended and its trace.
  ///
  /// The body runs in a child task that prefers this executor. When the run ends without the body having
  /// returned (a deadlock, too many steps), the child is cancelled, and this returns once it has unwound:
  /// every wait of the package returns when its task is cancelled, but a wait of the body's own that
  /// ignores cancellation keeps it suspended, and this with it.
  func run(
    _ body: @Sendable () async throws -> Void, plan: SchedulePlan, limits: Limits
  ) async -> (end: ScheduleEnd, trace: ScheduleTrace) {
    let outcome = Locked<(any Error)??>(nil)
    return await withoutActuallyEscaping(body) { body in
      await withTaskGroup(of: Void.self) { group in
        group.addTask(executorPreference: self) {
          await TaskSchedule.$host.withValue(self) {
            let error: (any Error)?
            do {
              try await body()
              error = nil
            } catch let thrown {
              error = thrown
            }
            outcome.withLock { $0 = .some(error) }
            self.state.withLock { $0.bodyReturned() }
            self.wake.signal()
          }
        }
        let (end, trace) = await withCheckedContinuation { continuation in
          Thread.detachNewThread {
            let ended = self.drive(plan: plan, limits: limits, outcome: outcome)
            continuation.resume(returning: ended)
          }
        }
        // A deadlock is said on standard error when the body's unwinding stalls after it is cancelled: a
        // body whose own waits ignore cancellation never unwinds, and then this never returns. A body that
        // unwinds says nothing here, however slowly a busy machine runs its jobs: the failure it returns is
        // reported where it is caught.
        if case .deadlock(let awaited) = end {
          let report =
            ["deadlock under schedule \(plan): nothing can run and the body has not returned"] + awaited
          reportWhenUnwindingStalls(report.joined(separator: "\n  ") + "\n")
        }
        if case .returned = end {} else { group.cancelAll() }
        await group.waitForAll()
        return (end, trace)
      }
    }
  }

  /// Looks at the released run every 5 s until its body has returned, and writes `report` to standard
  /// error once, at the first look that finds its unwinding stalled (``ScheduleState/unwindingStalled()``).
  private func reportWhenUnwindingStalls(_ report: String) {
    DispatchQueue.global().asyncAfter(deadline: .now() + 5) {
      let (stalled, returned) = self.state.withLock { ($0.unwindingStalled(), $0.hasBodyReturned) }
      if stalled {
        FileHandle.standardError.write(Data(report.utf8))
      } else if !returned {
        self.reportWhenUnwindingStalls(report)
      }
    }
  }

  /// The driver thread's loop: run the chosen job, pass virtual time, or wait for a wake from outside.
  private func drive(
    plan: SchedulePlan, limits: Limits, outcome: Locked<(any Error)??>
  ) -> (ScheduleEnd, ScheduleTrace) {
    var chooser = plan.chooser()
    var trace = ScheduleTrace()
    let executor = asUnownedTaskExecutor()
    while true {
      var choice: SchedulePlan.Choice?
      let step = state.withLock { state in
        state.step { ready in
          let made = chooser.choose(among: ready.map(\.task))
          choice = made
          return made.index
        }
      }
      switch step {
      case .run(let scheduled, _, let count):
        if let choice { trace.ran(choice, count: count) }
        scheduled.job.runSynchronously(on: executor)
        if trace.steps >= limits.maxSteps {
          runReleased(state.withLock { $0.release() })
          return (.tooManySteps(trace.steps), trace)
        }
      case .bodyReturned:
        runReleased(state.withLock { $0.release() })
        return (.returned(error: outcome.withLock { $0 ?? nil }), trace)
      case .idle:
        if passVirtualTime(&trace) { continue }
        let nanoseconds =
          limits.quietPeriod.components.seconds * 1_000_000_000
          + limits.quietPeriod.components.attoseconds / 1_000_000_000
        if wake.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success { continue }
        let (awaited, leftover) = state.withLock { state -> ([String], [ScheduledJob]?) in
          if case .driving(let ready) = state.phase, !ready.isEmpty || state.hasBodyReturned {
            return ([], nil)
          }
          return (state.awaited, state.release())
        }
        guard let leftover else { continue }
        runReleased(leftover)
        return (.deadlock(awaited: awaited), trace)
      }
    }
  }

  /// Advances the manual clock whose next sleeper is nearest; returns whether one had a sleeper.
  private func passVirtualTime(_ trace: inout ScheduleTrace) -> Bool {
    let watched = clocks.withLock { $0 }
    var nearest: (index: Int, wait: Duration)?
    for (index, clock) in watched.enumerated() {
      guard let wait = clock.timeToNextSleeper else { continue }
      if nearest == nil || wait < nearest!.wait { nearest = (index, wait) }
    }
    guard let nearest else { return false }
    let components = nearest.wait.components
    let nanoseconds = components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    trace.advanced(clock: nearest.index, nanoseconds: nanoseconds)
    virtualTime.withLock { $0 &+= UInt64(max(nanoseconds, 0)) }
    watched[nearest.index].advance(by: nearest.wait)
    return true
  }
}

/// A ready job and the number of the task it continues (`nil` for a job of no task, such as an actor's).
struct ScheduledJob: Sendable {
  let job: UnownedJob
  let task: Int?

  /// The task number a job's description names (`ExecutorJob(id: 12)`), or `nil` when it names none.
  ///
  /// The runtime offers no other way to tell which task a job continues; a description it cannot read
  /// leaves every job anonymous, and the priority strategy then runs the oldest ready job first.
  static func taskNumber(in description: String) -> Int? {
    guard let range = description.range(of: "id: ") else { return nil }
    return Int(description[range.upperBound...].prefix { $0.isNumber })
  }
}
