// Seed and case count of the randomised tests, read from the environment so a failure can be replayed.

import Foundation

/// Settings of a randomised test: `SIMPLESOURCE_SEED` replays one run, `SIMPLESOURCE_RANDOM_CASES` sets
/// how many cases it tries.
struct RandomTestSettings {
  let seed: UInt64
  let cases: Int
  /// The environment variable that sets ``cases``.
  let casesVariable: String

  /// The seed is shared by every randomised test of one run, so one printed seed replays them all.
  static let runSeed = ProcessInfo.processInfo.environment["SIMPLESOURCE_SEED"].flatMap(UInt64.init)
    ?? UInt64.random(in: 1..<UInt64.max)

  static func current(defaultCases: Int, casesVariable: String = "SIMPLESOURCE_RANDOM_CASES") -> RandomTestSettings {
    let cases = ProcessInfo.processInfo.environment[casesVariable].flatMap(Int.init) ?? defaultCases
    return RandomTestSettings(seed: runSeed, cases: cases, casesVariable: casesVariable)
  }

  /// The seed of one shard, derived from the run's seed so that one printed seed replays every shard.
  func seed(forShard shard: Int) -> UInt64 { seed &+ UInt64(shard) &* 0x9E37_79B9_7F4A_7C15 }

  /// How to replay: printed with every failure.
  var replay: String { "replay with SIMPLESOURCE_SEED=\(seed) \(casesVariable)=\(cases)" }
}
