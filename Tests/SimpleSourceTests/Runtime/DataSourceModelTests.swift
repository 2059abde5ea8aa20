// Seeded randomised model test: concurrent writers, subscribers of every speed, the contract checked after.

import Foundation
import SimpleSource
import SimpleSourceTesting
import Testing

/// How a subscriber in a random run behaves.
enum SubscriberBehaviour: CaseIterable {
  case steady, stallThenResume, cancelMidway, late
}

@Suite("BasicDataSource under random concurrent load", .timeLimit(.minutes(30)))
struct DataSourceModelTests {
  static let shards = 0..<4
  static let settings = RandomTestSettings.current(
    defaultCases: 400, casesVariable: "SIMPLESOURCE_MODEL_RUNS")

  @Test(
    "every live subscriber ends showing the source's snapshot, through valid, contiguous batches",
    arguments: shards)
  func randomRuns(shard: Int) async throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: shard))
    let runs = settings.cases / Self.shards.count + (shard < settings.cases % Self.shards.count ? 1 : 0)
    var behaviours: [SubscriberBehaviour: Int] = [:]
    var outcomes = (mutations: 0, rejected: 0, batches: 0)
    for run in 0..<runs {
      let runSeed = random.next()
      let result = await Self.run(seed: runSeed)
      for (behaviour, count) in result.behaviours { behaviours[behaviour, default: 0] += count }
      outcomes.mutations += result.mutations
      outcomes.rejected += result.rejected
      outcomes.batches += result.batches
      if let failure = result.failure {
        Issue.record("shard \(shard) run \(run) (run seed \(runSeed)): \(failure)\n\(settings.replay)")
        return
      }
    }
    print(
      "DataSource model shard \(shard): \(runs) runs passed, \(outcomes.mutations) mutations (\(outcomes.rejected) rejected), \(outcomes.batches) batches, subscribers \(behaviours); \(settings.replay)"
    )
  }

  struct RunResult {
    var failure: String?
    var behaviours: [SubscriberBehaviour: Int] = [:]
    var mutations = 0
    var rejected = 0
    var batches = 0
  }

  static func run(seed: UInt64) async -> RunResult {
    var random = SeededGenerator(seed: seed)
    var result = RunResult()
    let initial = RandomSnapshotPairs(maxSections: 5, maxItems: 30).next(using: &random).old
    guard let source = try? TestSource(sections: initial) else {
      return RunResult(failure: "initial layout invalid")
    }
    let behaviours = (0..<Int.random(in: 1...4, using: &random)).map { _ in
      SubscriberBehaviour.allCases.randomElement(using: &random)!
    }
    for behaviour in behaviours { result.behaviours[behaviour, default: 0] += 1 }
    var recorders: [(SubscriberBehaviour, BatchRecorder<TestSection>)] = []
    for behaviour in behaviours where behaviour != .late {
      let recorder = await BatchRecorder(
        await source.subscribe(), refreshStyle: Bool.random(using: &random) ? .reload : .reconfigure,
        paused: behaviour == .stallThenResume)
      recorders.append((behaviour, recorder))
    }
    let writerSeeds = (0..<Int.random(in: 2...4, using: &random)).map { _ in random.next() }
    let lateCount = behaviours.count { $0 == .late }
    let counts = await withTaskGroup(of: (Int, Int, String?).self) { group in
      for writerSeed in writerSeeds {
        group.addTask { await Self.write(source, seed: writerSeed) }
      }
      var late: [(SubscriberBehaviour, BatchRecorder<TestSection>)] = []
      for _ in 0..<lateCount {
        late.append((.late, await BatchRecorder(await source.subscribe())))
      }
      for (behaviour, recorder) in recorders where behaviour == .cancelMidway { await recorder.cancel() }
      var totals = (0, 0, nil as String?)
      for await (mutations, rejected, failure) in group {
        totals.0 += mutations
        totals.1 += rejected
        totals.2 = totals.2 ?? failure
      }
      recorders += late
      return totals
    }
    result.mutations = counts.0
    result.rejected = counts.1
    if let failure = counts.2 { return RunResult(failure: failure) }

    await source.settled()
    let final = await source.snapshot
    for (behaviour, recorder) in recorders {
      if behaviour == .cancelMidway {
        await recorder.finished()
      } else {
        await recorder.resume()
        await recorder.showing(final)
        if !(await recorder.view.shows(final.sections)) {
          return RunResult(failure: "\(behaviour) subscriber does not show the final snapshot \(final)")
        }
      }
      let violations = await recorder.violations
      if !violations.isEmpty { return RunResult(failure: "\(behaviour) subscriber: \(violations)") }
      result.batches += await recorder.batches.count
      await recorder.cancel()
      await recorder.finished()
    }
    if source.subscriberCount != 0 { return RunResult(failure: "\(source.subscriberCount) subscribers left") }
    return result
  }

  /// Random valid and invalid mutations; every rejection must be a typed error or the body's own.
  static func write(_ source: TestSource, seed: UInt64) async -> (Int, Int, String?) {
    var random = SeededGenerator(seed: seed)
    var rejected = 0
    let count = Int.random(in: 5...30, using: &random)
    func itemID(_ random: inout SeededGenerator) -> String { "\(Int.random(in: 0..<40, using: &random))" }
    func sectionID(_ random: inout SeededGenerator) -> String { "S\(Int.random(in: 0..<7, using: &random))" }
    func position(_ random: inout SeededGenerator) -> ItemPosition {
      ItemPosition(
        section: Int.random(in: 0..<6, using: &random), item: Int.random(in: 0..<8, using: &random))
    }
    for _ in 0..<count {
      let fresh = TestItem("w\(seed % 10_000)-\(random.next() % 1_000)")
      let existing = TestItem(itemID(&random), version: Int.random(in: 0...2, using: &random))
      let section = sectionID(&random)
      let other = sectionID(&random)
      let anchor = itemID(&random)
      let from = position(&random)
      let to = position(&random)
      let shouldThrow = Bool.random(using: &random)
      let choice = Int.random(in: 0..<16, using: &random)
      do {
        switch choice {
        case 0: try await source.appendItems([fresh], toSection: section)
        case 1: try await source.insertItems([fresh], before: anchor)
        case 2: try await source.insertItems([fresh, existing], after: anchor)
        case 3: try await source.deleteItems([existing.id])
        case 4: try await source.moveItem(existing.id, before: anchor)
        case 5: try await source.moveItem(existing.id, after: anchor)
        case 6: try await source.moveItem(existing.id, toSection: section)
        case 7: try await source.moveItem(at: from, to: to)
        case 8: try await source.replaceItem(existing)
        case 9: try await source.appendSections([TestSection(id: section, header: "h", items: [fresh])])
        case 10: try await source.deleteSections([section])
        case 11: try await source.moveSection(section, before: other)
        case 12: try await source.updateSection(TestSection(id: section, header: shouldThrow ? "h1" : "h2"))
        case 13: try await source.refreshItems([existing.id])
        case 14: try await source.insertSections([TestSection(id: section, items: [])], after: other)
        default:
          try await source.update { sections in
            if !sections.isEmpty {
              let index = sections.count / 2
              sections[index].items.reverse()
              sections.append(sections.remove(at: 0))
            }
            if shouldThrow { throw Refusal() }
          }
        }
      } catch is DataSourceError<String, String> {
        rejected += 1
      } catch is Refusal {
        rejected += 1
      } catch {
        return (count, rejected, "unexpected error type \(error)")
      }
    }
    return (count, rejected, nil)
  }
}
