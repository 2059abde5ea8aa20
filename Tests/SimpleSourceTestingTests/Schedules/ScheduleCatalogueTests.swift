// The planted bugs must be found under seeded schedules, and their correct versions must pass every one.

import Foundation
import SimpleSource
@testable import SimpleSourceTesting
import Testing

@Suite("Seeded schedules find planted bugs", .timeLimit(.minutes(30)))
struct ScheduleCatalogueTests {
  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "each planted bug is found, shrunk, and its shrunk schedule fails again",
    arguments: PlantedBug.allCases)
  func plantedBugIsFound(_ bug: PlantedBug) async throws {
    let limits = ScheduleExecutor.Limits(quietPeriod: .milliseconds(200), maxSteps: 100_000)
    let start = ContinuousClock.now
    let failure = try await #require(throws: ScheduleFailure.self) {
      try await exploreSchedules(count: 1_000, limits: limits, replaying: nil) {
        try await bug.run(correct: false)
      }
    }
    let elapsed = ContinuousClock.now - start
    print(
      "catalogue \(bug): found after \(failure.schedulesUntilFound) schedules, found and shrunk in \(elapsed), "
        + "shrunk to \(failure.preemptions) preemptions (\(failure.schedule))")
    await #expect(throws: ScheduleFailure.self) {
      try await exploreSchedules(count: 1, limits: limits, replaying: failure.schedule) {
        try await bug.run(correct: false)
      }
    }
  }

  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "each planted bug's correct version passes every schedule",
    .seededSchedules(25, quietPeriod: .milliseconds(200)), arguments: PlantedBug.allCases)
  func correctVersionPasses(_ bug: PlantedBug) async throws {
    try await bug.run(correct: true)
  }

  /// One plain run of each planted bug, as `swift test` runs it, for the catalogue's plain-runs figure
  /// (`Benchmarks/schedules/plain-runs.sh` runs it 200 times). A bug that hangs is caught by a hang guard,
  /// as a plain suite's time limit would catch it.
  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "one plain run of each planted bug",
    .enabled(if: ProcessInfo.processInfo.environment["SIMPLESOURCE_PLANTED_PLAIN_RUN"] != nil),
    arguments: PlantedBug.allCases)
  func plainRun(_ bug: PlantedBug) async {
    let caught = await withTaskGroup(of: Bool.self) { group in
      group.addTask {
        do {
          try await bug.run(correct: false)
          return false
        } catch {
          return true
        }
      }
      group.addTask {
        // A hang guard of a measurement that is off in the suite: a plain run that hangs is the bug striking.
        try? await Task.sleep(for: .seconds(1))
        return true
      }
      let first = await group.next() ?? false
      group.cancelAll()
      return first
    }
    print("plain run of \(bug): \(caught ? "caught" : "missed")")
  }
}
