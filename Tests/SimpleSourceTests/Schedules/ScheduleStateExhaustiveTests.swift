// Every sequence of a seeded schedule's events to a depth: each job runs exactly once, in the order chosen.

@testable import SimpleSourceTesting
import Testing

/// A schedule's state machine beside a plain model of it: the ready jobs in order, the jobs handed out
/// (run by the driver, or released to run elsewhere), the running tasks and waits, and whether a released
/// run's unwinding has stalled.
private struct ScheduleWorld: ExplorableWorld {
  enum Step: String, CustomStringConvertible {
    case enqueue, runOldest, runNewest, bodyReturns, deadlock, taskStarts, taskFinishes, waitBegins, waitEnds
    case releasedJobRuns, look
    var description: String { rawValue }
  }

  var state = ScheduleState<Int>()
  var ready: [Int] = []
  var nextJob = 0
  var handedOut: [Int] = []
  var driverEnded = false
  var bodyHasReturned = false
  var tasks: [Int] = [0]
  var waits: [Int] = []
  /// Jobs released to run elsewhere that have not run yet, and whether one ran since the last look.
  var releasedWaiting = 0
  var releasedRanSinceLook = false

  func steps() -> [Step] {
    var steps: [Step] = [.enqueue, .taskStarts]
    if !driverEnded { steps += [.runOldest, .runNewest] }
    if !bodyHasReturned { steps.append(.bodyReturns) }
    if !driverEnded, ready.isEmpty, !bodyHasReturned { steps.append(.deadlock) }
    if tasks.count > 1 { steps.append(.taskFinishes) }
    if !tasks.isEmpty { steps.append(.waitBegins) }
    if !waits.isEmpty { steps.append(.waitEnds) }
    if releasedWaiting > 0 { steps.append(.releasedJobRuns) }
    if driverEnded { steps.append(.look) }
    return steps
  }

  mutating func perform(_ step: Step) throws {
    switch step {
    case .enqueue:
      let job = nextJob
      nextJob += 1
      switch state.enqueue(job) {
      case .wakeDriver:
        guard !driverEnded else { throw ExplorationFailure(description: "a released run kept job \(job)") }
        ready.append(job)
      case .runReleased(let released):
        guard driverEnded, released == job else {
          throw ExplorationFailure(description: "job \(job) released while the run was driven")
        }
        handedOut.append(released)
        releasedWaiting += 1
      }
    case .runOldest, .runNewest:
      try drive(newest: step == .runNewest)
    case .bodyReturns:
      state.bodyReturned()
      bodyHasReturned = true
      tasks.removeAll { $0 == 0 }
    case .deadlock:
      let released = state.release()
      handedOut += released
      releasedWaiting += released.count
      releasedRanSinceLook = false
      ready = []
      driverEnded = true
    case .taskStarts:
      tasks.append(state.taskStarted("worker"))
    case .taskFinishes:
      state.taskFinished(tasks.removeLast())
    case .waitBegins:
      waits.append(state.waitBegan("something", task: tasks.last!))
    case .waitEnds:
      state.waitEnded(waits.removeFirst())
    case .releasedJobRuns:
      state.releasedJobRan()
      releasedWaiting -= 1
      releasedRanSinceLook = true
    case .look:
      let stalled = !bodyHasReturned && releasedWaiting == 0 && !releasedRanSinceLook
      guard state.unwindingStalled() == stalled else {
        let read = stalled ? "running" : "stalled"
        throw ExplorationFailure(description: "the unwinding read \(read) (\(releasedWaiting) jobs waiting)")
      }
      releasedRanSinceLook = false
    }
    guard state.awaited.count == tasks.count else {
      throw ExplorationFailure(description: "\(state.awaited.count) tasks reported, \(tasks.count) running")
    }
  }

  /// One step of the driver, choosing the oldest or the newest ready job.
  private mutating func drive(newest: Bool) throws {
    switch state.step(choose: { newest ? $0.count - 1 : 0 }) {
    case .run(let job, let choice, let count):
      guard !bodyHasReturned, count == ready.count, job == ready[choice], choice == (newest ? count - 1 : 0)
      else {
        throw ExplorationFailure(description: "ran job \(job) at \(choice) of \(count); ready \(ready)")
      }
      ready.remove(at: choice)
      handedOut.append(job)
    case .idle:
      guard ready.isEmpty, !bodyHasReturned else {
        throw ExplorationFailure(description: "idle with \(ready)")
      }
    case .bodyReturned:
      guard bodyHasReturned else { throw ExplorationFailure(description: "the body's end reported early") }
      let released = state.release()
      handedOut += released
      releasedWaiting += released.count
      ready = []
      driverEnded = true
    }
  }

  mutating func checkSettled() throws {
    if !driverEnded {
      if !bodyHasReturned { try perform(.bodyReturns) }
      try drive(newest: false)
    }
    guard handedOut.sorted() == Array(0..<nextJob) else {
      throw ExplorationFailure(description: "jobs handed out \(handedOut) of \(nextJob) enqueued")
    }
  }
}

@Suite("ScheduleState: every sequence of events")
struct ScheduleStateExhaustiveTests {
  // A mutation this catches: `release()` returning `[]` instead of the ready jobs loses every job that was
  // ready when the run ended (found after one event: a job enqueued, then the run settled).
  // Another: `unwindingStalled()` ignoring the jobs handed out but not yet run reads a busy machine's slow
  // unwinding as stalled (a job enqueued after a deadlock, then a look).
  @Test(
    "each job runs exactly once, the chosen one, every running task is reported, and a stall is read only when nothing runs"
  )
  func everySequence() throws {
    try checkEverySequence(
      "schedule state", from: ScheduleWorld(), depthVariable: "SIMPLESOURCE_SCHEDULE_STATE_DEPTH",
      defaultDepth: 6)
  }
}
