// Per-change-kind animations: each operation of a batch gets its kind's animation, checked by the reference
// host, which records the animation of every operation.

import SimpleSource
import SimpleSourceTesting
import Testing

@MainActor
@Suite("Animations per kind of change", .timeLimit(.minutes(30)))
struct ChangeAnimationsTests {
  @Test("inserts, deletes and reloads of items and sections each get their own animation")
  func eachKindItsAnimation() async throws {
    let animations = ChangeAnimations(
      insertItems: .fade, deleteItems: .left, reloadItems: .middle, insertSections: .top,
      deleteSections: .bottom,
      reloadSections: .none)
    let (host, dataSource) = makeView(.animated(refreshing: .reload, animations: animations))
    let source = try BasicDataSource(sections: layout("A: a b | B: c | C: d"))
    await dataSource.follow(source)
    try await source.update { sections in
      sections[0].items.remove(at: 0)  // delete a
      sections[0].items.append(TestItem("e"))  // insert e
      sections[1].items[0].version = 1  // reload c
      sections.remove(at: 2)  // delete section C
      sections.append(TestSection(id: "D"))  // insert section D
    }
    await source.settled()
    await dataSource.showing(await source.snapshot)
    expectShowing(try Snapshot(await source.snapshot.sections), host, dataSource)
    let got = Dictionary(host.animations.map { ($0.kind, $0.animation) }, uniquingKeysWith: { $1 })
    #expect(got[.deleteItems] == .left)
    #expect(got[.insertItems] == .fade)
    #expect(got[.reloadItems] == .middle)
    #expect(got[.deleteSections] == .bottom)
    #expect(got[.insertSections] == .top)
    #expect(
      host.animations.contains(
        AnimatedOperation(.insertItems, item: ItemPosition(section: 0, item: 1), .fade)))
    #expect(host.animations.contains(AnimatedOperation(.deleteSections, section: 2, .bottom)))
  }

  @Test("the plain animated policy uses the view's own animation; unanimated records none")
  func defaults() async throws {
    let (host, dataSource) = makeView(.animated())
    let source = try BasicDataSource(sections: layout("A: a"))
    await dataSource.follow(source)
    try await source.appendItems([TestItem("b")], toSection: "A")
    await source.settled()
    await dataSource.showing(await source.snapshot)
    #expect(
      host.animations == [
        AnimatedOperation(.insertItems, item: ItemPosition(section: 0, item: 1), .automatic)
      ])

    let (quiet, quietSource) = makeView(.unanimated)
    await quietSource.follow(source)
    try await source.appendItems([TestItem("c")], toSection: "A")
    await source.settled()
    await quietSource.showing(await source.snapshot)
    #expect(quiet.animations.isEmpty)
    #expect(
      ChangeAnimations(.fade)
        == ChangeAnimations(
          insertItems: .fade, deleteItems: .fade, reloadItems: .fade, insertSections: .fade,
          deleteSections: .fade,
          reloadSections: .fade))
  }
}
