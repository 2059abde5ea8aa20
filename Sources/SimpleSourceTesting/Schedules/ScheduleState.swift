// The state of one seeded schedule's run, shared by the threads that enqueue jobs and the one that runs them.

/// The synchronous state machine behind a seeded schedule's executor: the jobs ready to run, whether the
/// test's body has returned, the tasks and waits a deadlock report names, and whether a released run's
/// unwinding has stalled.
///
/// Its events come from five sides: any thread enqueues a job (``enqueue(_:)``); the driver thread asks for
/// the next step (``step(choose:)``) and ends the run (``release()``); the body's task says it returned
/// (``bodyReturned()``); the queue that runs released jobs says each one ran (``releasedJobRan()``); and the
/// watcher of a deadlocked run looks at its unwinding (``unwindingStalled()``). Each event returns what, if
/// anything, the caller must do after releasing the lock.
///
/// Every job enqueued is run exactly once: by the driver while the run is being driven, then, once it is
/// released, by whoever runs the released jobs (each released job is handed out exactly once).
struct ScheduleState<Job: Sendable>: Sendable {
  /// Where jobs go.
  enum Phase {
    /// The driver runs jobs one at a time, in the order the schedule chooses.
    case driving(ready: [Job])
    /// The run is over (the body returned, deadlocked or ran too long): jobs run as they come, elsewhere.
    case released
  }

  /// What an enqueuer does after the lock is released.
  enum EnqueueAction {
    /// Wake the driver: the job waits in the ready list.
    case wakeDriver
    /// Run the job elsewhere: the run is over.
    case runReleased(Job)
  }

  /// What the driver does next.
  enum Step {
    /// Run `job`, chosen at `choice` among `count` ready jobs (0 is the oldest).
    case run(Job, choice: Int, count: Int)
    /// Nothing is ready and the body has not returned: advance virtual time, or wait for a wake from
    /// outside the schedule.
    case idle
    /// The body returned: the run is over.
    case bodyReturned
  }

  /// A task that started under the schedule and has not returned.
  struct RunningTask: Equatable {
    let number: Int
    let name: String
  }

  /// A wait in progress: task `task` awaits `label`.
  struct Wait: Equatable {
    let number: Int
    let task: Int
    let label: String
  }

  private(set) var phase: Phase = .driving(ready: [])
  private(set) var hasBodyReturned = false
  private(set) var tasks: [RunningTask] = [RunningTask(number: 0, name: "the test's body")]
  private(set) var waits: [Wait] = []
  private var nextTask = 1
  private var nextWait = 0
  /// The jobs handed out to run elsewhere once the run was released, and how many of those have run.
  private(set) var releasedJobs = (handedOut: 0, ran: 0)
  /// `releasedJobs.ran` at the last look of ``unwindingStalled()`` (or at the release, before the first).
  private var ranAtLastLook = 0

  /// A job became ready.
  mutating func enqueue(_ job: Job) -> EnqueueAction {
    switch phase {
    case .driving(var ready):
      phase = .released  // Drops the array's reference, so the append below does not copy it.
      ready.append(job)
      phase = .driving(ready: ready)
      return .wakeDriver
    case .released:
      releasedJobs.handedOut += 1
      return .runReleased(job)
    }
  }

  /// The driver's next step; `choose` picks an index among the ready jobs (oldest first, at least one) and
  /// is called only when a job is ready.
  mutating func step(choose: ([Job]) -> Int) -> Step {
    guard case .driving(var ready) = phase else { preconditionFailure("stepped a released schedule") }
    if hasBodyReturned { return .bodyReturned }
    guard !ready.isEmpty else { return .idle }
    let count = ready.count
    let choice = min(max(choose(ready), 0), count - 1)
    phase = .released
    let job = ready.remove(at: choice)
    phase = .driving(ready: ready)
    return .run(job, choice: choice, count: count)
  }

  /// The body returned.
  mutating func bodyReturned() {
    hasBodyReturned = true
    tasks.removeAll { $0.number == 0 }
    waits.removeAll { $0.task == 0 }
  }

  /// Ends the run: the jobs still ready are returned to be run elsewhere, and later ones go there too.
  mutating func release() -> [Job] {
    guard case .driving(let ready) = phase else { return [] }
    phase = .released
    releasedJobs.handedOut += ready.count
    ranAtLastLook = releasedJobs.ran
    return ready
  }

  /// A job handed out by ``release()`` or ``enqueue(_:)`` after the release has run.
  mutating func releasedJobRan() {
    releasedJobs.ran += 1
  }

  /// Whether the unwinding of a run released before its body returned has stalled: the body has still not
  /// returned, every job handed out since the release has run, and none ran since the last look (the
  /// release, at the first). A body that awaits something of its own that ignores cancellation stalls; one
  /// a busy machine slows down still has jobs waiting or running, and does not.
  mutating func unwindingStalled() -> Bool {
    guard case .released = phase, !hasBodyReturned else { return false }
    defer { ranAtLastLook = releasedJobs.ran }
    return releasedJobs.ran == releasedJobs.handedOut && releasedJobs.ran == ranAtLastLook
  }

  /// A task started; returns its number.
  mutating func taskStarted(_ name: String) -> Int {
    defer { nextTask += 1 }
    tasks.append(RunningTask(number: nextTask, name: name))
    return nextTask
  }

  /// Task `number` returned.
  mutating func taskFinished(_ number: Int) {
    tasks.removeAll { $0.number == number }
    waits.removeAll { $0.task == number }
  }

  /// Task `task` began to await `label`; returns the wait's number.
  mutating func waitBegan(_ label: String, task: Int) -> Int {
    defer { nextWait += 1 }
    waits.append(Wait(number: nextWait, task: task, label: label))
    return nextWait
  }

  /// Wait `number` ended.
  mutating func waitEnded(_ number: Int) {
    waits.removeAll { $0.number == number }
  }

  /// What each running task awaits, one line per task, for a deadlock report.
  var awaited: [String] {
    tasks.map { task in
      let labels = waits.filter { $0.task == task.number }.map(\.label)
      let what =
        labels.isEmpty
        ? "awaits something outside the package's waits" : "awaits " + labels.joined(separator: ", ")
      return task.number == 0 ? "\(task.name) \(what)" : "task \(task.number) (\(task.name)) \(what)"
    }
  }
}
