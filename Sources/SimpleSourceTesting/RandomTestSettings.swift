// The seed and size of a randomised test, read from the environment so that a failure can be replayed.

import Foundation

/// The seed and the number of cases of a randomised test, so that every failure can be replayed.
///
/// One seed serves every randomised test of a process: print ``replay`` with a failure (and in a summary
/// line), and `SIMPLESOURCE_SEED=<seed>` replays the whole run. The number of cases comes from an
/// environment variable of the test's choosing, so a quick local run and a long CI run share one test:
///
/// ```swift
/// @Test func randomEdits() {
///   let settings = RandomTestSettings.current(defaultCases: 500, casesVariable: "MYAPP_EDIT_CASES")
///   var random = SeededGenerator(seed: settings.seed)
///   for index in 0..<settings.cases {
///     // … draw from `random`; on failure: Issue.record("case \(index): … \(settings.replay)")
///   }
/// }
/// ```
public struct RandomTestSettings: Sendable {
  /// The seed of this run: `SIMPLESOURCE_SEED` when it is set, otherwise drawn once per process.
  public let seed: UInt64
  /// How many cases to try.
  public let cases: Int
  /// The environment variable that sets ``cases``.
  package let casesVariable: String

  /// The seed shared by every randomised test of one process, so that one printed seed replays them all.
  package static let runSeed: UInt64 =
    ProcessInfo.processInfo.environment["SIMPLESOURCE_SEED"].flatMap(UInt64.init)
    ?? UInt64.random(in: 1..<UInt64.max)

  /// The settings of one test.
  /// - Parameters:
  ///   - defaultCases: The number of cases when `casesVariable` is not set.
  ///   - casesVariable: The environment variable that overrides the number of cases.
  public static func current(
    defaultCases: Int, casesVariable: String = "SIMPLESOURCE_RANDOM_CASES"
  ) -> RandomTestSettings {
    let cases = ProcessInfo.processInfo.environment[casesVariable].flatMap(Int.init) ?? defaultCases
    return RandomTestSettings(seed: runSeed, cases: cases, casesVariable: casesVariable)
  }

  /// The seed of one shard, derived from the run's seed so that one printed seed replays every shard.
  ///
  /// The shard number is mixed in, not added as a multiple of ``SeededGenerator``'s own step: that would
  /// make shard *k* replay shard 0's sequence shifted by *k* draws.
  public func seed(forShard shard: Int) -> UInt64 {
    var mixer = SeededGenerator(seed: seed ^ (UInt64(truncatingIfNeeded: shard) &* 0xD1B5_4A32_D192_ED03))
    return mixer.next()
  }

  /// How to replay this run: `replay with SIMPLESOURCE_SEED=… VARIABLE=…`.
  public var replay: String { "replay with SIMPLESOURCE_SEED=\(seed) \(casesVariable)=\(cases)" }
}
