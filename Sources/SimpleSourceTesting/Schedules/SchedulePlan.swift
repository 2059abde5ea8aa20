// How a seeded schedule chooses the next job, and how a schedule is written down to be replayed.

import Foundation

/// One schedule: the rule that picks which ready job runs next, written as the text
/// `SIMPLESOURCE_SCHEDULE_SEED` takes.
///
/// Left to itself, a schedule does what a cooperative thread does: it goes on with the task that ran last
/// while that task has a job ready, and otherwise runs the oldest ready job. A step that runs another job
/// while the last task has one ready is a *preemption*.
///
/// - A seed (`1234`) picks one of three strategies by its remainder modulo 3:
///   - 0, a random walk: every choice uniform among the ready jobs;
///   - 1, priorities (PCT): each task draws a random priority when it first has a job ready, the ready job
///     of the highest one runs, and at up to ``priorityChanges`` random steps the task about to run drops
///     below every other, so one task can be starved for as long as a bug needs;
///   - 2, few preemptions: the default choice, except at up to ``preemptionBound`` random steps, where
///     another ready job runs.
/// - A list of choices (`choices:17=2,42=1`): the default choice at every step but the ones listed, where
///   the listed index among the ready jobs (0 is the oldest) runs; what shrinking finds.
struct SchedulePlan: Hashable, Sendable, CustomStringConvertible {
  /// The most preemptions a few-preemptions seed makes.
  static let preemptionBound = 3
  /// The most priority changes a priorities seed makes.
  static let priorityChanges = 3

  enum Rule: Hashable, Sendable {
    case seed(UInt64)
    case choices([Int: Int])
  }

  let rule: Rule

  init(seed: UInt64) { rule = .seed(seed) }
  init(choices: [Int: Int]) { rule = .choices(choices) }

  /// Reads a schedule written as ``description`` writes it; `nil` for anything else.
  init?(_ text: String) {
    let text = text.trimmingCharacters(in: .whitespaces)
    if let seed = UInt64(text) {
      self.init(seed: seed)
      return
    }
    guard text.hasPrefix("choices:") else { return nil }
    var choices: [Int: Int] = [:]
    let list = text.dropFirst("choices:".count)
    for pair in list == "none" ? [] : list.split(separator: ",") {
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
      // No choice listed: the default at every step, written so that the token does not read as cut off.
      if choices.isEmpty { return "choices:none" }
      return "choices:" + choices.keys.sorted().map { "\($0)=\(choices[$0]!)" }.joined(separator: ",")
    }
  }

  /// The chooser that plays this schedule.
  func chooser() -> Chooser { Chooser(rule: rule) }

  /// One step's choice.
  struct Choice {
    /// The index of the job that runs among the ready ones (0 is the oldest).
    let index: Int
    /// Whether it is not the default choice: what a list of choices must name to replay it.
    let isExplicit: Bool
    /// Whether it left the last task while that task had a job ready.
    let preempts: Bool
  }

  /// Picks each step's job: a value the driver thread owns.
  struct Chooser {
    private let rule: Rule
    private var random: SeededGenerator
    private var changesLeft: Int
    private var step = 0
    /// The task of the job that ran last, once one has.
    private var last: Int??
    /// Each task's priority (the key of jobs of no task is `nil`), drawn when it first has a job ready.
    private var priorities: [Int?: UInt64] = [:]

    init(rule: Rule) {
      self.rule = rule
      if case .seed(let seed) = rule {
        random = SeededGenerator(seed: seed)
        changesLeft = seed % 3 == 1 ? SchedulePlan.priorityChanges : SchedulePlan.preemptionBound
      } else {
        random = SeededGenerator(seed: 0)
        changesLeft = 0
      }
    }

    /// The job to run among the ready ones (oldest first), given the task each continues.
    mutating func choose(among tasks: [Int?]) -> Choice {
      let lastTaskReady = last.flatMap { last in tasks.firstIndex { $0 == last } }
      let fallback = lastTaskReady ?? 0
      let index = min(max(pick(tasks, fallback: fallback), 0), tasks.count - 1)
      step += 1
      last = .some(tasks[index])
      return Choice(
        index: index, isExplicit: index != fallback, preempts: lastTaskReady.map { $0 != index } ?? false)
    }

    private mutating func pick(_ tasks: [Int?], fallback: Int) -> Int {
      let count = tasks.count
      guard count > 1 else { return 0 }
      switch rule {
      case .choices(let choices):
        return choices[step] ?? fallback
      case .seed(let seed) where seed % 3 == 0:
        return Int(random.next() % UInt64(count))
      case .seed(let seed) where seed % 3 == 1:
        return byPriority(tasks)
      case .seed:
        guard changesLeft > 0, random.next() % 8 == 0 else { return fallback }
        changesLeft -= 1
        return (fallback + 1 + Int(random.next() % UInt64(count - 1))) % count
      }
    }

    /// The oldest ready job of the task with the highest priority; at a change point, that task first
    /// drops below every other.
    private mutating func byPriority(_ tasks: [Int?]) -> Int {
      for task in tasks where priorities[task] == nil {
        // Drawn priorities stay above the ones change points give (at most `priorityChanges`).
        priorities[task] = UInt64(SchedulePlan.priorityChanges) + 1 + random.next() % (1 << 40)
      }
      var chosen = highest(tasks)
      if changesLeft > 0, random.next() % 16 == 0 {
        priorities[tasks[chosen]] = UInt64(changesLeft)
        changesLeft -= 1
        chosen = highest(tasks)
      }
      return chosen
    }

    private func highest(_ tasks: [Int?]) -> Int {
      var best = 0
      for index in tasks.indices.dropFirst() where priorities[tasks[index]]! > priorities[tasks[best]]! {
        best = index
      }
      return best
    }
  }
}

/// The record of one run's choices: what its hash is taken over, and what shrinking starts from.
struct ScheduleTrace: Sendable {
  /// The choices that were not the default, by step: what replays the run as a list of choices.
  private(set) var choices: [Int: Int] = [:]
  /// The steps taken.
  private(set) var steps = 0
  /// The steps that left the last task while it had a job ready.
  private(set) var preemptions = 0
  private var hash: UInt64 = 0xCBF2_9CE4_8422_2325

  /// The step ran the job `choice` picked among `count`.
  mutating func ran(_ choice: SchedulePlan.Choice, count: Int) {
    if choice.isExplicit { choices[steps] = choice.index }
    if choice.preempts { preemptions += 1 }
    mix(UInt64(steps))
    mix(UInt64(count))
    mix(UInt64(choice.index))
    steps += 1
  }

  /// Virtual time moved: clock `clock` (in the order clocks were first slept on) by `nanoseconds`.
  mutating func advanced(clock: Int, nanoseconds: Int64) {
    mix(0xFFFF_FFFF_0000_0000 | UInt64(clock))
    mix(UInt64(bitPattern: nanoseconds))
  }

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
