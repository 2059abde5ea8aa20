// Changesets from touched ids (the derived path of projections) against the full diff.

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire
import SimpleSourceTesting
import Testing

@Suite("Changeset from touched ids")
struct TouchedChangesetTests {
  static let settings = RandomTestSettings.current(
    defaultCases: 800, casesVariable: "SIMPLESOURCE_DERIVED_CASES")

  @Test("a changeset from touched ids equals the full diff, and a wrong hint falls back to it")
  func touchedChangeset() throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 41))
    for index in 0..<settings.cases {
      var sections = layout("A: a b c d | B: e f' g | C: | D: h i")
      for _ in 0..<Int.random(in: 0..<8, using: &random) { RandomEdit(using: &random).apply(to: &sections) }
      var next = sections
      for _ in 0..<Int.random(in: 1..<4, using: &random) { RandomEdit(using: &random).apply(to: &next) }
      guard let old = try? Snapshot(sections), let new = try? Snapshot(next) else { continue }
      let full = Changeset(from: old, to: new)
      let touched = Set(full.itemChanges.ids)
      // A wrong hint leaves out one touched id that moved and kept its content: the promise the hint
      // breaks is then about order, which the walk checks. (An item left out whose content changed is the
      // documented exception: untouched items' contents are not compared.)
      let updated = Set(full.itemChanges.updates.map(\.id))
      let wrong = touched.subtracting(
        full.itemChanges.moves.lazy.map(\.id).filter { !updated.contains($0) }.prefix(1))
      for hint in [touched, wrong] {
        let derived = Changeset(from: old, to: new, touching: hint)
        let place = "case \(index): \(old) → \(new), hint \(hint.sorted()); \(settings.replay)"
        #expect(derived.itemChanges == full.itemChanges, "\(place)")
        #expect(derived.sectionChanges == full.sectionChanges, "\(place)")
        #expect(derived.stages.map(\.itemChanges) == full.stages.map(\.itemChanges), "\(place)")
        #expect(derived.stages.map(\.kind) == full.stages.map(\.kind), "\(place)")
      }
    }
  }
}
