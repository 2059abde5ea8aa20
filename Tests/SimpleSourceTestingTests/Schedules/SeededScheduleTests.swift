// What a seeded schedule promises: the same seed takes the same steps, the package's tasks run under it,
// time is virtual, deadlocks are reported with what each task awaits, and a failure replays from its text.

import SimpleSource
@testable import SimpleSourceTesting
import Testing

@Suite("Seeded schedules", .timeLimit(.minutes(30)))
struct SeededScheduleTests {
  /// A body with a source, a subscriber, two writers and a clock: enough tasks for schedules to differ.
  @Sendable static func busyBody() async throws {
    let source = try BasicDataSource(sections: [TestSection(id: "inbox", items: [])])
    let recorder = await BatchRecorder(source.subscribe())
    let writers = (0..<3).map { index in
      Task.schedulable("writer \(index)") {
        try await source.appendItems([TestItem("item \(index)")], toSection: "inbox")
      }
    }
    for writer in writers { _ = try await writer.value }
    await source.settled()
    #expect(await recorder.showing(source.snapshot))
  }

  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("the same schedule takes the same steps: 10 seeds, each replayed 10 times")
  func sameSeedSameTrace() async throws {
    let limits = ScheduleExecutor.Limits(quietPeriod: .seconds(2), maxSteps: 100_000)
    var hashes: Set<String> = []
    for index in 0..<10 {
      let plan = SchedulePlan(seed: scheduleSeed(index))
      var traces: Set<String> = []
      for _ in 0..<10 {
        let attempt = await attemptSchedule(plan, body: Self.busyBody, limits: limits)
        #expect(attempt.failure == nil, "schedule \(plan): \(attempt.failure?.reason ?? "")")
        traces.insert(attempt.trace.hashText)
      }
      #expect(traces.count == 1, "schedule \(plan) gave \(traces.count) different traces: \(traces.sorted())")
      hashes.formUnion(traces)
    }
    print("10 seeds, 10 replays each: \(hashes.count) distinct traces, each replayed identically")
    #expect(hashes.count > 1, "ten seeds all took the same steps: the schedule chose nothing")
  }

  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("the package's tasks and Task.schedulable run under the schedule; without one they see none")
  func tasksRunUnderTheSchedule() async throws {
    let outside = await Task.schedulable("outside") { TaskSchedule.host == nil }.value
    #expect(outside)
    try await exploreSchedules(count: 4) {
      // Only work under the schedule is awaited here: a plain `Task { }` runs on the global executor, and
      // on a loaded machine its wake-up may come later than the quiet period.
      let inside = await Task.schedulable("inside") { TaskSchedule.host != nil }.value
      let source = try BasicDataSource(sections: [TestSection(id: "inbox", items: [])])
      let recorder = await BatchRecorder(source.subscribe())
      _ = try await source.appendItems([TestItem("a")], toSection: "inbox")
      let shown = await recorder.showing(source.snapshot)
      guard inside, shown else {
        throw PlantedBugFound(description: "the schedule's host did not reach the tasks")
      }
    }
  }

  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a manual clock moves to its next sleeper when nothing else can run")
  func virtualTime() async throws {
    try await exploreSchedules(count: 10) {
      let clock = ManualClock()
      // The sleeps are what is tested, not a wait: manual time passes only when nothing else can run.
      async let late: Void = clock.sleep(for: .seconds(3600))
      async let early: Void = clock.sleep(for: .seconds(60))
      _ = try await (late, early)
      guard clock.now.offset == .seconds(3600) else {
        throw PlantedBugFound(description: "an hour of sleeps ended at \(clock.now)")
      }
    }
  }

  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a schedule where nothing can run is reported with what each task awaits, and the body is cancelled to unwind"
  )
  func deadlockNamesWhatEachTaskAwaits() async throws {
    let failure = try await #require(throws: ScheduleFailure.self) {
      try await exploreSchedules(count: 1, quietPeriod: .milliseconds(100)) {
        let source = try BasicDataSource(sections: [TestSection(id: "inbox", items: [])])
        let subscription = await source.subscribe()
        let reader = Task.schedulable("a reader that expects a batch") {
          for await _ in subscription.batches { return }
        }
        let recorder = await BatchRecorder(source.subscribe())
        let never = try Snapshot([TestSection(id: "inbox", items: [TestItem("never written")])])
        await withTaskCancellationHandler {
          _ = await recorder.showing(never)
        } onCancel: {
          reader.cancel()
        }
      }
    }
    #expect(failure.reason.hasPrefix("deadlock"))
    #expect(
      failure.awaited.contains { $0.hasPrefix("the test's body awaits showing(_:)") }, "\(failure.awaited)")
    #expect(
      failure.awaited.contains {
        $0.contains("(a reader that expects a batch) awaits the next batch of a subscription")
      }, "\(failure.awaited)")
  }

  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a body that never returns fails after the most steps, and unwinds when cancelled")
  func tooManySteps() async throws {
    let failure = try await #require(throws: ScheduleFailure.self) {
      try await exploreSchedules(count: 1, maxSteps: 1_000) {
        // A body that never returns on purpose: the step limit, not time, must end it.
        while !Task.isCancelled { await Task.yield() }
      }
    }
    #expect(failure.reason.contains("after 1000 steps"))
  }

  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a failure's shrunk schedule replays the same failure with the same trace")
  func shrunkScheduleReplays() async throws {
    let limits = ScheduleExecutor.Limits(quietPeriod: .milliseconds(200), maxSteps: 100_000)
    let failure = try await #require(throws: ScheduleFailure.self) {
      try await exploreSchedules(count: 200, limits: limits, replaying: nil) {
        try await PlantedBug.waitForTheFirstWriter.run(correct: false)
      }
    }
    for _ in 0..<10 {
      let replayed = try await #require(throws: ScheduleFailure.self) {
        try await exploreSchedules(count: 1, limits: limits, replaying: failure.schedule) {
          try await PlantedBug.waitForTheFirstWriter.run(correct: false)
        }
      }
      #expect(replayed.traceHash == failure.traceHash)
      #expect(replayed.preemptions == failure.preemptions)
    }
    // The seed it was found under fails again too.
    await #expect(throws: ScheduleFailure.self) {
      try await exploreSchedules(count: 1, limits: limits, replaying: failure.foundSchedule) {
        try await PlantedBug.waitForTheFirstWriter.run(correct: false)
      }
    }
  }

  @Test("a schedule reads back from what it writes; no choice at all is choices:none, not a cut-off token")
  func planText() {
    for plan in [SchedulePlan(seed: 42), SchedulePlan(choices: [:]), SchedulePlan(choices: [7: 1, 17: 2])] {
      #expect(SchedulePlan(plan.description) == plan, "\(plan)")
    }
    #expect(SchedulePlan(choices: [:]).description == "choices:none")
    #expect(SchedulePlan("choices:") == SchedulePlan(choices: [:]), "the old spelling still reads")
  }

  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a replay that is neither a seed nor a list of choices is a typed error naming it")
  func badReplay() async throws {
    let limits = ScheduleExecutor.Limits(quietPeriod: .milliseconds(100), maxSteps: 1_000)
    let failure = try await #require(throws: ScheduleFailure.self) {
      try await exploreSchedules(count: 1, limits: limits, replaying: "choices:1=x") {}
    }
    #expect(failure.reason.contains("choices:1=x"))
  }

  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("the trait finds a failing schedule and says how to replay it, at the test's own line")
  func traitRecordsTheFailure() async throws {
    let trait = SeededSchedules.seededSchedules(50, quietPeriod: .milliseconds(200))
    let failure = try #require(
      try await trait.failure {
        try await PlantedBug.lostUpdateAcrossAwait.run(correct: false)
      })
    // The issue is recorded where the user's test is, not in the library, and names the replay.
    let test = try #require(Test.current)
    let (comment, location) = SeededSchedules.issue(for: failure, in: test)
    #expect(comment.rawValue.contains("replay with SIMPLESOURCE_SCHEDULE_SEED=\(failure.schedule)"))
    #expect(location == test.sourceLocation && location.fileName == "SeededScheduleTests.swift")
  }
}
