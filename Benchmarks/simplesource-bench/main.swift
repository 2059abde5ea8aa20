// simplesource-bench: times snapshots and changesets against a Dictionary floor measured in the same run.
//
//   swift run -c release simplesource-bench                       all cases, a table
//   swift run -c release simplesource-bench --json                all cases, one JSON object
//   swift run -c release simplesource-bench --case flat-100k-int --iterations 50   one case (profilers)

import Foundation

#if canImport(Glibc)
  import Glibc
#endif
import SimpleSource

// MARK: - Command line

struct Options {
  var json = false
  var caseName: String?
  var iterations = 15

  init(_ arguments: [String]) {
    var rest = arguments.makeIterator()
    while let argument = rest.next() {
      switch argument {
      case "--json": json = true
      case "--case": caseName = rest.next()
      case "--iterations": iterations = rest.next().flatMap(Int.init) ?? iterations
      case "--quick": break  // read where the sizes are (`isQuickRun`)
      case "--help", "-h":
        print("usage: simplesource-bench [--json] [--case NAME] [--iterations K] [--quick]")
        print("--quick: every case at a small size, to check that it runs; its figures mean nothing")
        print("cases: \((diffCaseNames + runtimeCaseNames).joined(separator: ", "))")
        exit(0)
      default:
        FileHandle.standardError.write(Data("unknown argument \(argument); try --help\n".utf8))
        exit(2)
      }
    }
  }
}

// MARK: - Measurement

/// Keeps a value alive so the optimizer cannot drop the work that produced it.
@inline(never)
func consume<T>(_ value: T) {
  withExtendedLifetime(value) {}
}

struct Timing {
  var samples: [Double] = []  // milliseconds
  var median: Double {
    let sorted = samples.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
  }
  var minimum: Double { samples.min() ?? .nan }
}

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func measure(_ iterations: Int, _ body: () -> Void) -> Timing {
  let clock = ContinuousClock()
  body()  // warm up
  var timing = Timing()
  for _ in 0..<iterations {
    let elapsed = clock.measure(body)
    timing.samples.append(milliseconds(elapsed))
  }
  return timing
}

// MARK: - Data, built the way the standard Swift diff benchmark builds it

struct SplitMix64: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

struct Item<ID: Hashable & Sendable>: Identifiable, Equatable, Sendable {
  let id: ID
  var version = 0
}

extension Item: Codable where ID: Codable {}

/// Source ids 0..<count; target = source minus `deleted`, `inserted` new ids at `deleted.lowerBound`'s
/// insert point, then `shuffled` shuffled with a fixed seed.
func flatIDs(count: Int, deleted: Range<Int>, inserted: Int, insertAt: Int, shuffled: Range<Int>)
  -> (source: [Int], target: [Int])
{
  let source = Array(0..<count)
  var target = source
  target.removeSubrange(deleted)
  target.insert(contentsOf: count..<(count + inserted), at: insertAt)
  var random = SplitMix64(state: 42)
  target[shuffled].shuffle(using: &random)
  return (source, target)
}

/// Minimal moves, computed here independently: items outside one longest increasing subsequence of
/// old positions, plus items that change section.
func minimalMoves<ID: Hashable>(_ old: [[ID]], _ new: [[ID]], oldSections: [Int], newSections: [Int]) -> Int {
  var where_ = [ID: (Int, Int)]()
  for (s, items) in old.enumerated() {
    for (i, id) in items.enumerated() { where_[id] = (oldSections[s], i) }
  }
  var moves = 0
  for (index, items) in new.enumerated() {
    let s = newSections[index]
    var tails: [Int] = []
    var same = 0
    for id in items {
      guard let (os, oi) = where_[id] else { continue }
      if os != s {
        moves += 1
        continue
      }
      same += 1
      var low = 0
      var high = tails.count
      while low < high {
        let mid = (low + high) / 2
        if tails[mid] < oi { low = mid + 1 } else { high = mid }
      }
      if low == tails.count { tails.append(oi) } else { tails[low] = oi }
    }
    moves += same - tails.count
  }
  return moves
}

func minimalSectionMoves<ID: Hashable>(_ old: [ID], _ new: [ID]) -> Int {
  minimalMoves([old], [new.filter(Set(old).contains)], oldSections: [0], newSections: [0])
}

// MARK: - Cases

/// The floor every diff is measured against: one Dictionary build over the old ids, one lookup pass over
/// the new ones.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func dictionaryFloor<ID: Hashable>(_ sourceIDs: [ID], _ targetIDs: [ID], iterations: Int) -> Timing {
  measure(iterations) { dictionaryFloorPass(sourceIDs, targetIDs) }
}

/// One pass of the floor: the Dictionary build and the lookups.
func dictionaryFloorPass<ID: Hashable>(_ sourceIDs: [ID], _ targetIDs: [ID]) {
  var index = [ID: Int](minimumCapacity: sourceIDs.count)
  for (offset, id) in sourceIDs.enumerated() { index[id] = offset }
  var found = 0
  for id in targetIDs where index[id] != nil { found += 1 }
  consume(found)
}

/// Times `first` and `second` in alternating iterations, after one warm-up of each.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func measureAlternately(_ iterations: Int, _ first: () -> Void, _ second: () -> Void) -> (Timing, Timing) {
  let clock = ContinuousClock()
  first()
  second()
  var timings = (Timing(), Timing())
  for _ in 0..<iterations {
    timings.0.samples.append(milliseconds(clock.measure(first)))
    timings.1.samples.append(milliseconds(clock.measure(second)))
  }
  return timings
}

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func milliseconds(_ duration: Duration) -> Double {
  Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
}

struct DiffResult {
  var name: String
  var snapshot: Timing
  var changeset: Timing
  var floor: Timing
  var standardLibrary: Timing?
  var itemMoves: Int
  var minimalItemMoves: Int
  var sectionMoves: Int
  var minimalSectionMoves: Int
  var stages: Int
}

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func runDiffCase<ID: Hashable & Sendable>(
  name: String, old: [[ID]], new: [[ID]], oldVersion: (ID) -> Int = { _ in 0 },
  newVersion: (ID) -> Int = { _ in 0 }, sectionIDs: (old: [Int], new: [Int])? = nil,
  standardLibrary: Bool, iterations: Int
) -> DiffResult {
  typealias S = Section<Int, Item<ID>>
  let oldSectionIDs = sectionIDs?.old ?? Array(old.indices)
  let newSectionIDs = sectionIDs?.new ?? Array(new.indices)
  let oldSections = zip(oldSectionIDs, old).map {
    S(id: $0, items: $1.map { Item(id: $0, version: oldVersion($0)) })
  }
  let newSections = zip(newSectionIDs, new).map {
    S(id: $0, items: $1.map { Item(id: $0, version: newVersion($0)) })
  }
  let sourceIDs = old.flatMap { $0 }
  let targetIDs = new.flatMap { $0 }

  func build(_ sections: [S]) -> Snapshot<S> {
    do { return try Snapshot(sections) } catch { fatalError("benchmark data is invalid: \(error)") }
  }
  let source = build(oldSections)
  let target = build(newSections)

  let floor = dictionaryFloor(sourceIDs, targetIDs, iterations: iterations)
  var snapshot = measure(iterations) { consume(build(oldSections)) }
  let snapshotTarget = measure(iterations) { consume(build(newSections)) }
  snapshot.samples = zip(snapshot.samples, snapshotTarget.samples).map { ($0 + $1) / 2 }
  let changeset = measure(iterations) { consume(Changeset(from: source, to: target)) }
  let standard: Timing? =
    standardLibrary
    ? measure(iterations) { consume(targetIDs.difference(from: sourceIDs).inferringMoves()) } : nil

  let result = Changeset(from: source, to: target)
  return DiffResult(
    name: name, snapshot: snapshot, changeset: changeset, floor: floor, standardLibrary: standard,
    itemMoves: result.stages.reduce(0) { $0 + $1.itemChanges.moves.count },
    minimalItemMoves: minimalMoves(old, new, oldSections: oldSectionIDs, newSections: newSectionIDs),
    sectionMoves: result.stages.reduce(0) { $0 + $1.sectionChanges.moves.count },
    minimalSectionMoves: minimalSectionMoves(oldSectionIDs, newSectionIDs), stages: result.stages.count)
}

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func flatCase(_ size: String, stringIDs: Bool, iterations: Int) -> DiffResult {
  let (source, target) =
    size == "5k"
    ? flatIDs(count: 5_000, deleted: 2_000..<3_000, inserted: 1_000, insertAt: 3_000, shuffled: 0..<200)
    : flatIDs(
      count: 100_000, deleted: 20_000..<30_000, inserted: 10_000, insertAt: 30_000, shuffled: 0..<2_000)
  let name = "flat-\(size)-\(stringIDs ? "string" : "int")"
  if stringIDs {
    let text = { (id: Int) in "item-\(id)-\(id &* 2_654_435_761 % 1_000_003)" }
    return runDiffCase(
      name: name, old: [source.map(text)], new: [target.map(text)], standardLibrary: size == "5k",
      iterations: iterations)
  }
  return runDiffCase(
    name: name, old: [source], new: [target], standardLibrary: size == "5k", iterations: iterations)
}

/// 100 sections × 1,000 items: 2,500 deleted, 2,500 inserted, 2,500 moved across sections, 2,500 changed
/// in content, 5 sections moved (10 sections with `--quick`, the changes in proportion).
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func sectionedCase(iterations: Int) -> DiffResult {
  var random = SplitMix64(state: 7)
  let sections = sized(100, quick: 10)
  let (total, changes) = (sections * 1_000, sections * 25)
  let old: [[Int]] = (0..<sections).map { s in Array((s * 1_000)..<((s + 1) * 1_000)) }
  var all = old.flatMap { $0 }
  all.shuffle(using: &random)
  let deleted = Set(all[0..<changes])
  let moved = Array(all[changes..<(2 * changes)])
  let changed = Set(all[(2 * changes)..<(3 * changes)])
  let leaving = deleted.union(moved)
  var new = old.map { $0.filter { !leaving.contains($0) } }
  for id in moved {
    var section = Int.random(in: 0..<sections, using: &random)
    if section == id / 1_000 { section = (section + 1) % sections }
    new[section].insert(id, at: Int.random(in: 0...new[section].count, using: &random))
  }
  for id in total..<(total + changes) {
    let section = Int.random(in: 0..<sections, using: &random)
    new[section].insert(id, at: Int.random(in: 0...new[section].count, using: &random))
  }
  var order = Array(0..<sections)
  for _ in 0..<5 {
    let section = order.remove(at: Int.random(in: 0..<order.count, using: &random))
    order.insert(section, at: Int.random(in: 0...order.count, using: &random))
  }
  let reordered = order.map { new[$0] }
  return runDiffCase(
    name: "sectioned", old: old, new: reordered, newVersion: { changed.contains($0) ? 1 : 0 },
    sectionIDs: (Array(0..<sections), order), standardLibrary: false, iterations: iterations)
}

let diffCaseNames = ["flat-5k-int", "flat-5k-string", "flat-100k-int", "flat-100k-string", "sectioned"]

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func runDiffCase(named name: String, iterations: Int) -> DiffResult {
  switch name {
  case "flat-5k-int": flatCase("5k", stringIDs: false, iterations: iterations)
  case "flat-5k-string": flatCase("5k", stringIDs: true, iterations: iterations)
  case "flat-100k-int": flatCase("100k", stringIDs: false, iterations: iterations)
  case "flat-100k-string": flatCase("100k", stringIDs: true, iterations: iterations)
  default: sectionedCase(iterations: iterations)
  }
}

// MARK: - Output

func format(_ value: Double, _ digits: Int = 3) -> String { String(format: "%.\(digits)f", value) }

func printTable(_ results: [DiffResult]) {
  let header = [
    "case", "snapshot ms", "changeset ms (min)", "floor ms (min)", "stdlib ms", "snap/floor", "diff/floor",
    "item moves/min", "section moves/min", "stages",
  ]
  var rows = [header]
  for r in results {
    rows.append([
      r.name, format(r.snapshot.median), "\(format(r.changeset.median)) (\(format(r.changeset.minimum)))",
      "\(format(r.floor.median)) (\(format(r.floor.minimum)))",
      r.standardLibrary.map { format($0.median) } ?? "-",
      format(r.snapshot.median / r.floor.median, 2) + "x",
      format(r.changeset.median / r.floor.median, 2) + "x",
      "\(r.itemMoves)/\(r.minimalItemMoves)", "\(r.sectionMoves)/\(r.minimalSectionMoves)", "\(r.stages)",
    ])
  }
  let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
  for (index, row) in rows.enumerated() {
    print(
      zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  "))
    if index == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
  }
  print(
    "medians of the iterations; ratios are against the floor (Dictionary build + one lookup pass) in this run"
  )
}

func printRuntimeTable(_ results: [RuntimeResult]) {
  guard !results.isEmpty else { return }
  print("")
  let header = ["case", "ours ms", "floor ms", "ours/floor", "notes"]
  var rows = [header]
  for r in results {
    rows.append([
      r.name, r.ms.isNaN ? "-" : format(r.ms), r.floorMS.isNaN ? "-" : format(r.floorMS),
      r.floorMS.isNaN ? "-" : format(r.vsFloor, 2) + "x",
      r.note,
    ])
  }
  let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
  for (index, row) in rows.enumerated() {
    print(
      zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  "))
    if index == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
  }
  print(
    "throughput: time for 100,000 mutations from 8 tasks with 10 subscribers, floor: a bare actor append;")
  print(
    "fanout-N: one batch to N waiting subscribers, floor: N AsyncStream yields; latency: mutation to delivery,"
  )
  print("floor: an actor method yielding into a stream (medians)")
  print(
    "fanout-sinks-N: one batch to N subscribers parked with a sink, floor: one subscriber's task calling the N sinks"
  )
}

func json(_ results: [DiffResult], _ runtime: [RuntimeResult]) -> String {
  let cases = results.map { r -> String in
    var fields = [
      "\"case\": \"\(r.name)\"", "\"snapshot_ms\": \(r.snapshot.median)",
      "\"changeset_ms\": \(r.changeset.median)",
      "\"changeset_min_ms\": \(r.changeset.minimum)", "\"floor_ms\": \(r.floor.median)",
      "\"snapshot_vs_floor\": \(r.snapshot.median / r.floor.median)",
      "\"changeset_vs_floor\": \(r.changeset.median / r.floor.median)", "\"item_moves\": \(r.itemMoves)",
      "\"minimal_item_moves\": \(r.minimalItemMoves)", "\"section_moves\": \(r.sectionMoves)",
      "\"minimal_section_moves\": \(r.minimalSectionMoves)", "\"stages\": \(r.stages)",
    ]
    if let standard = r.standardLibrary {
      fields.append("\"stdlib_ms\": \(standard.median)")
      fields.append("\"stdlib_vs_changeset\": \(standard.median / r.changeset.median)")
    }
    return "{" + fields.joined(separator: ", ") + "}"
  }
  let runtimeCases = runtime.map { r -> String in
    var fields = ["\"case\": \"\(r.name)\""]
    if !r.ms.isNaN { fields.append("\"ms\": \(r.ms)") }
    if !r.floorMS.isNaN {
      fields.append("\"floor_ms\": \(r.floorMS)")
      if r.extra["vs_floor"] == nil { fields.append("\"vs_floor\": \(r.vsFloor)") }
    }
    for (key, value) in r.extra.sorted(by: { $0.key < $1.key }) { fields.append("\"\(key)\": \(value)") }
    return "{" + fields.joined(separator: ", ") + "}"
  }
  return "{\"cases\": [" + (cases + runtimeCases).joined(separator: ", ") + "]}"
}

// MARK: - Main

// One allocator policy for every case and both sides of each ratio. glibc's default raises its mmap
// threshold each time a large block is freed, so whether a 1 MiB array costs page faults depends on what
// ran before it: the same refilter measured 1.1x or 2.2x its floor depending on what the process had
// freed. A fixed threshold (which also turns the adjustment off) serves such arrays from the heap, as
// macOS's allocator does. glibc reads it only at start, so the benchmark restarts itself with it once.
// Benchmarks/HISTORY.md has the figures.
#if canImport(Glibc)
  if getenv("GLIBC_TUNABLES") == nil {
    setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=67108864", 1)
    var arguments = CommandLine.arguments.map { strdup($0) } + [nil]
    execv("/proc/self/exe", &arguments)
    // Not restarted (no /proc): measure with the default policy.
  }
#endif

let options = Options(Array(CommandLine.arguments.dropFirst()))
let names = options.caseName.map { [$0] } ?? (diffCaseNames + runtimeCaseNames)
if let unknown = names.first(where: { !diffCaseNames.contains($0) && !runtimeCaseNames.contains($0) }) {
  FileHandle.standardError.write(
    Data("unknown case \(unknown); cases: \(diffCaseNames + runtimeCaseNames)\n".utf8))
  exit(2)
}
#if DEBUG
  if !options.json { print("note: a debug build; run with -c release for meaningful timings") }
#endif
if isQuickRun {
  let note = "note: --quick: every case at a small size; its figures mean nothing\n"
  FileHandle.standardError.write(Data(note.utf8))
}
// The timings use ContinuousClock: iOS 16, macOS 13, tvOS 16 or watchOS 9 on Apple platforms.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func runBenchmarks(_ names: [String], options: Options) async {
  // With --json, standard output carries the JSON object alone: whatever a case prints while it runs (the
  // seeded schedules' summary line, for one) goes to standard error.
  fflush(nil)  // every stream: `stdout` itself is shared mutable state to Swift 6
  let standardOutput = options.json ? dup(STDOUT_FILENO) : -1
  if standardOutput >= 0 { dup2(STDERR_FILENO, STDOUT_FILENO) }
  let results = names.filter(diffCaseNames.contains).map {
    runDiffCase(named: $0, iterations: options.iterations)
  }
  var runtimeResults: [RuntimeResult] = []
  // A case measured in the same rounds as an earlier one is reported from those rounds.
  for name in names
  where runtimeCaseNames.contains(name) && !runtimeResults.contains(where: { $0.name == name }) {
    let measured = await runRuntimeCase(named: name, iterations: options.iterations)
    runtimeResults += measured.filter { names.contains($0.name) }
  }
  fflush(nil)
  if standardOutput >= 0 {
    dup2(standardOutput, STDOUT_FILENO)
    close(standardOutput)
  }
  if options.json {
    print(json(results, runtimeResults))
  } else {
    if !results.isEmpty { printTable(results) }
    printRuntimeTable(runtimeResults)
  }
}

if #available(iOS 16, macOS 13, tvOS 16, watchOS 9, *) {
  await runBenchmarks(names, options: options)
} else {
  fatalError("simplesource-bench needs macOS 13 or later (ContinuousClock)")
}
