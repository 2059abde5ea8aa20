// The planted bugs must be found under seeded schedules, and their correct versions must pass every one.

import SimpleSource
@testable import SimpleSourceTesting
import Testing

@Suite("Seeded schedules find planted bugs", .timeLimit(.minutes(10)))
struct ScheduleCatalogueTests {
  @Test(
    "each planted bug is found, replayed from its shrunk schedule, and shrunk", arguments: PlantedBug.allCases
  )
  func plantedBugIsFound(_ bug: PlantedBug) async throws {
    let failure = try await #require(throws: ScheduleFailure.self) {
      try await exploreSchedules(count: 200, quietPeriod: .milliseconds(200)) {
        try await bug.run(correct: false)
      }
    }
    print(
      "\(bug): found after \(failure.schedulesUntilFound) schedules, shrunk to \(failure.preemptions) preemptions"
    )
    #expect(failure.preemptions >= 0)
  }

  @Test(
    "each planted bug's correct version passes every schedule",
    .seededSchedules(100, quietPeriod: .milliseconds(200)),
    arguments: PlantedBug.allCases)
  func correctVersionPasses(_ bug: PlantedBug) async throws {
    try await bug.run(correct: true)
  }
}
