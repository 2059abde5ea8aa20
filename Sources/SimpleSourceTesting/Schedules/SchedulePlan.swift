// How a seeded schedule chooses the next job, and how a schedule is written down to be replayed.

import Foundation

/// One schedule: the rule that picks which ready job runs next, written as the text
/// `SIMPLESOURCE_SCHEDULE_SEED` takes.
///
/// - A seed (`1234`): an even seed walks at random (every choice uniform among the ready jobs); an odd
///   seed runs the oldest ready job except at a few random steps, at most ``preemptionBound`` of them,
///   where it runs another (a bounded number of preemptions, as PCT bounds them).
/// - A list of choices (`choices:17=2,42=1`): the oldest ready job at every step but the ones listed,
///   where the listed index (0 is the oldest) runs; what shrinking finds.
struct SchedulePlan: Hashable, Sendable, CustomStringConvertible {
  /// The most preemptions an odd seed makes.
  static let preemptionBound = 3

  enum Rule: Hashable, Sendable {
    case seed(UInt64)
    case choices([Int: Int])
  }

  let rule: Rule

  init(seed: UInt64) { rule = .seed(seed) }
  init(choices: [Int: Int]) { rule = .choices(choices.filter { $0.value != 0 }) }

  /// Reads a schedule written as ``description`` writes it; `nil` for anything else.
  init?(_ text: String) {
    let text = text.trimmingCharacters(in: .whitespaces)
    if let seed = UInt64(text) {
      self.init(seed: seed)
      return
    }
    guard text.hasPrefix("choices:") else { return nil }
    var choices: [Int: Int] = [:]
    for pair in text.dropFirst("choices:".count).split(separator: ",") {
      let parts = pair.split(separator: "=")
      guard parts.count == 2, let step = Int(parts[0]), let choice = Int(parts[1]), step >= 0, choice >= 0
      else { return nil }
      choices[step] = choice
    }
    self.init(choices: choices)
  }

  var description: String {
    switch rule {
    case .seed(let seed):
      return "\(seed)"
    case .choices(let choices):
      return "choices:" + choices.keys.sorted().map { "\($0)=\(choices[$0]!)" }.joined(separator: ",")
    }
  }

  /// The chooser that plays this schedule.
  func chooser() -> Chooser { Chooser(rule: rule) }

  /// Picks each step's job: a value the driver thread owns.
  struct Chooser {
    private let rule: Rule
    private var random: SeededGenerator
    private var preemptionsLeft = SchedulePlan.preemptionBound
    private var step = 0

    init(rule: Rule) {
      self.rule = rule
      if case .seed(let seed) = rule {
        random = SeededGenerator(seed: seed)
      } else {
        random = SeededGenerator(seed: 0)
      }
    }

    /// The index (0 is the oldest) of the job to run among `count` ready ones.
    mutating func choose(among count: Int) -> Int {
      defer { step += 1 }
      guard count > 1 else { return 0 }
      switch rule {
      case .choices(let choices):
        return min(choices[step] ?? 0, count - 1)
      case .seed(let seed) where seed % 2 == 0:
        return Int(random.next() % UInt64(count))
      case .seed:
        guard preemptionsLeft > 0, random.next() % 8 == 0 else { return 0 }
        preemptionsLeft -= 1
        return 1 + Int(random.next() % UInt64(count - 1))
      }
    }
  }
}

/// The record of one run's choices: what its hash is taken over, and what shrinking starts from.
struct ScheduleTrace: Sendable {
  /// Each step's choice, by step number, where there was more than one job to choose from.
  private(set) var choices: [Int: Int] = [:]
  /// The steps taken.
  private(set) var steps = 0
  private var hash: UInt64 = 0xCBF2_9CE4_8422_2325

  /// The step ran the job at `choice` among `count`.
  mutating func ran(choice: Int, count: Int) {
    if count > 1 { choices[steps] = choice }
    mix(UInt64(steps))
    mix(UInt64(count))
    mix(UInt64(choice))
    steps += 1
  }

  /// Virtual time moved: clock `clock` (in the order clocks were first slept on) by `nanoseconds`.
  mutating func advanced(clock: Int, nanoseconds: Int64) {
    mix(0xFFFF_FFFF_0000_0000 | UInt64(clock))
    mix(UInt64(bitPattern: nanoseconds))
  }

  /// The choices that ran another job than the oldest ready one.
  var preemptions: Int { choices.values.count { $0 != 0 } }

  /// The FNV-1a hash of every choice and time step, in hexadecimal: the same schedule gives the same one.
  var hashText: String {
    let text = String(hash, radix: 16)
    return String(repeating: "0", count: 16 - text.count) + text
  }

  private mutating func mix(_ value: UInt64) {
    var value = value
    for _ in 0..<8 {
      hash ^= value & 0xFF
      hash &*= 0x0000_0100_0000_01B3
      value >>= 8
    }
  }
}
