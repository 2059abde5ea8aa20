// The persistent dictionary against a plain Dictionary: random edits with colliding hashes, old versions
// untouched, compaction, and what an edit copies.

import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire

/// A key whose hash is its id modulo `buckets`: keys of one bucket collide on the whole hash.
private struct Colliding: Hashable {
  let id: Int
  let buckets: Int
  static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
  func hash(into hasher: inout Hasher) { hasher.combine(id % buckets) }
}

@Suite("Persistent dictionary")
struct PersistentDictionaryTests {
  @Test("lookups, updates and removals, including keys whose whole hashes collide")
  func basics() {
    var dictionary = PersistentDictionary<Colliding, String>()
    let (a, b, c) = (Colliding(id: 1, buckets: 3), Colliding(id: 4, buckets: 3), Colliding(id: 2, buckets: 3))
    #expect(dictionary.updateValue("a", forKey: a) == nil)
    #expect(dictionary.updateValue("b", forKey: b) == nil, "a and b collide")
    #expect(dictionary.updateValue("B", forKey: b) == "b")
    dictionary[c] = "c"
    #expect(dictionary[a] == "a" && dictionary[b] == "B" && dictionary[c] == "c" && dictionary.count == 3)
    #expect(dictionary.violations == [])
    #expect(dictionary.removeValue(forKey: a) == "a")
    #expect(dictionary.removeValue(forKey: a) == nil)
    #expect(dictionary[b] == "B" && dictionary.count == 2 && dictionary.violations == [], "compacted")
    dictionary[b] = nil
    dictionary[c] = nil
    #expect(dictionary.count == 0 && dictionary.entries.isEmpty && dictionary.violations == [])
  }

  /// Seeded random edit sequences (`SIMPLESOURCE_PERSISTENT_CASES`, 200 here and 4,000 in CI): keys from
  /// a small range (so updates and removals hit), with hashes that collide whole in some cases; after the
  /// edits the dictionary equals the Dictionary model, its invariants hold, and an earlier version kept
  /// aside is exactly as it was.
  @Test("random edits match a Dictionary, keep the trie's invariants, and leave old versions alone")
  func randomEdits() {
    let settings = RandomTestSettings.current(
      defaultCases: 200, casesVariable: "SIMPLESOURCE_PERSISTENT_CASES")
    var random = SeededGenerator(seed: settings.seed)
    var failures = 0
    for index in 0..<settings.cases where failures < 3 {
      let buckets = [7, 1_000, Int.max][index % 3]
      let range = Int.random(in: 1..<3_000, using: &random)
      var model: [Colliding: Int] = [:]
      var dictionary = PersistentDictionary<Colliding, Int>()
      var kept: (dictionary: PersistentDictionary<Colliding, Int>, model: [Colliding: Int])?
      for step in 0..<Int.random(in: 1..<400, using: &random) {
        if step == 50 { kept = (dictionary, model) }
        let key = Colliding(id: Int.random(in: 0..<range, using: &random), buckets: buckets)
        if Int.random(in: 0..<3, using: &random) == 0 {
          #expect(dictionary.removeValue(forKey: key) == model.removeValue(forKey: key))
        } else {
          #expect(dictionary.updateValue(step, forKey: key) == model.updateValue(step, forKey: key))
        }
      }
      let probe = Colliding(id: Int.random(in: 0..<range, using: &random), buckets: buckets)
      let entries = Dictionary(uniqueKeysWithValues: dictionary.entries.map { ($0.key, $0.value) })
      if entries != model || dictionary.count != model.count || !dictionary.violations.isEmpty
        || dictionary[probe] != model[probe]
      {
        failures += 1
        Issue.record("case \(index): \(dictionary.violations) \(settings.replay)")
      }
      if let kept,
        Dictionary(uniqueKeysWithValues: kept.dictionary.entries.map { ($0.key, $0.value) }) != kept.model
      {
        failures += 1
        Issue.record("case \(index): an old version changed \(settings.replay)")
      }
    }
    print("Persistent dictionary: \(settings.cases) random edit sequences checked, \(settings.replay)")
  }

  @Test("an edit of a copy of 200,000 entries copies one path; removing an absent key copies nothing")
  func editCopiesOnePath() {
    var original = PersistentDictionary<Int, Int>()
    for key in 0..<200_000 { original[key] = key }
    let before = Set(original.nodes.map(ObjectIdentifier.init))
    for edit in 0..<4 {
      var copy = original
      switch edit {
      case 0: copy[100_000] = -1
      case 1: copy[2_000_000] = 1
      case 2: copy[123] = nil
      default: copy[-5] = nil
      }
      let fresh = copy.nodes.filter { !before.contains(ObjectIdentifier($0)) }.count
      #expect(fresh <= (edit == 3 ? 0 : 6), "edit \(edit): \(fresh) new nodes; one per level")
    }
    #expect(original.count == 200_000 && original[100_000] == 100_000 && original[123] == 123)
  }
}
