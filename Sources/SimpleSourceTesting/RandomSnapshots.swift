// Seeded random snapshot pairs for property tests of diffs, views and data sources.

import SimpleSource

/// A small, fast, seedable random number generator (SplitMix64), so a failing case can be replayed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// Creates a generator; the same seed gives the same sequence on every platform.
  public init(seed: UInt64) { state = seed }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Random pairs of layouts with every kind of change UIKit has to handle.
///
/// Each pair draws its own mix of change rates (some pairs only move, some delete everything, …):
/// section deletes, inserts and moves; item deletes, inserts, moves within and across sections, items
/// leaving deleted sections and entering inserted ones; content changes of items and section headers;
/// empty sections.
package struct RandomSnapshotPairs: Sendable {
  /// The largest number of sections in either layout.
  package var maxSections: Int
  /// The largest number of items in the old layout.
  package var maxItems: Int

  /// Creates a generator of pairs.
  package init(maxSections: Int = 30, maxItems: Int = 300) {
    self.maxSections = maxSections
    self.maxItems = maxItems
  }

  /// A random pair `(old, new)` of valid layouts.
  package func next(using random: inout some RandomNumberGenerator) -> (
    old: [TestSection], new: [TestSection]
  ) {
    var nextID = 0
    func newID() -> String {
      defer { nextID += 1 }
      return "\(nextID)"
    }
    func rate(_ random: inout some RandomNumberGenerator) -> Double {
      [0, 0, 0.02, 0.1, 0.3, 0.7, 1][Int.random(in: 0..<7, using: &random)]
    }
    func chance(_ p: Double, _ random: inout some RandomNumberGenerator) -> Bool {
      p > 0 && Double.random(in: 0..<1, using: &random) < p
    }

    let sectionCount = Int.random(in: 0...maxSections, using: &random)
    var old = (0..<sectionCount).map { _ in TestSection(id: "S" + newID(), header: "h0", items: []) }
    if !old.isEmpty {
      for _ in 0..<Int.random(in: 0...maxItems, using: &random) {
        old[Int.random(in: 0..<old.count, using: &random)].items.append(TestItem(newID()))
      }
    }

    let deleteSection = rate(&random), deleteItem = rate(&random), moveWithin = rate(&random)
    let moveAcross = rate(&random), insertItem = rate(&random), insertSection = rate(&random)
    let moveSection = rate(&random), changeItem = rate(&random), changeHeader = rate(&random)
    let keepOrphan = rate(&random)

    var new: [TestSection] = []
    var displaced: [TestItem] = []
    for var section in old {
      let deleted = chance(deleteSection, &random)
      var kept: [TestItem] = []
      for item in section.items {
        if chance(deleteItem, &random) { continue }
        if deleted {
          if chance(keepOrphan, &random) { displaced.append(item) }
        } else if chance(moveAcross, &random) {
          displaced.append(item)
        } else {
          kept.append(item)
        }
      }
      if deleted { continue }
      for _ in 0..<kept.count where chance(moveWithin, &random) {
        let item = kept.remove(at: Int.random(in: 0..<kept.count, using: &random))
        kept.insert(item, at: Int.random(in: 0...kept.count, using: &random))
      }
      section.items = kept
      if chance(changeHeader, &random) { section.header = "h1" }
      new.append(section)
    }
    let insertedSections = chance(insertSection, &random) ? Int.random(in: 1...4, using: &random) : 0
    for _ in 0..<insertedSections where new.count < maxSections {
      let section = TestSection(id: "S" + newID(), header: "h0", items: [])
      new.insert(section, at: Int.random(in: 0...new.count, using: &random))
    }
    for _ in 0..<new.count where chance(moveSection, &random) {
      let section = new.remove(at: Int.random(in: 0..<new.count, using: &random))
      new.insert(section, at: Int.random(in: 0...new.count, using: &random))
    }
    if !new.isEmpty {
      let inserted =
        chance(insertItem, &random) ? Int.random(in: 1...max(1, maxItems / 4), using: &random) : 0
      for item in displaced + (0..<inserted).map({ _ in TestItem(newID()) }) {
        let section = Int.random(in: 0..<new.count, using: &random)
        new[section].items.insert(item, at: Int.random(in: 0...new[section].items.count, using: &random))
      }
    }
    for section in new.indices {
      for item in new[section].items.indices where chance(changeItem, &random) {
        new[section].items[item].version += 1
      }
    }
    return (old, new)
  }
}
