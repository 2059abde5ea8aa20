// Swipe actions of ListInteractions on an ObservedList's rows (what the SwiftUI skin shows and runs): the
// closure for the row's kind with the item and position the source has, observed per row, and performed on
// the item the row shows when the user picks the action.

import Observation
import SimpleSource
import SimpleSourceTesting
import Testing

struct ArchiveRefused: Error, Equatable {}

@MainActor
@Suite("ObservedList swipe actions", .timeLimit(.minutes(30)))
struct ObservedListInteractionTests {
  /// Interactions whose trailing actions name the item and position asked about; `done` records what the
  /// handler received, and an item of version 9 makes the handler throw.
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  static func interactions(recording done: Recorded) -> ListInteractions<TestSection> {
    let interactions = ListInteractions<TestSection>()
    interactions.all.trailingSwipeActions = { item, position in
      SwipeActions([
        SwipeAction(title: "Archive \(item) at \(position.section).\(position.item)", style: .destructive) {
          item, position in
          done.values.append("\(item) at \(position.section).\(position.item)")
          if item.version == 9 { throw ArchiveRefused() }
          return true
        }
      ])
    }
    interactions.forItems(withReuseIdentifier: "pinned") { pinned in
      pinned.trailingSwipeActions = { _, _ in SwipeActions([], performsFirstActionWithFullSwipe: false) }
      pinned.leadingSwipeActions = { _, _ in nil }
    }
    interactions.interactionFailed = { item, error in done.values.append("failed \(item): \(error)") }
    return interactions
  }

  @MainActor
  final class Recorded {
    var values: [String] = []
  }

  @Test("a row that asked for its actions is invalidated when the interactions' closures change")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func interactionsAreObserved() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let list = await ObservedList(following: source, pacing: .immediate)
    let interactions = ListInteractions<TestSection>()
    let invalidations = Invalidations()
    invalidations.track("row a") { _ = list.swipeActions(.leading, forRow: "a", in: interactions) }
    #expect(invalidations.counts == [:])
    interactions.all.leadingSwipeActions = { _, _ in
      SwipeActions([SwipeAction(title: "Pin") { _, _ in true }])
    }
    #expect(invalidations.counts == ["row a": 1], "a closure set after the row drew reaches it")
    #expect(list.swipeActions(.leading, forRow: "a", in: interactions)?.actions.first?.title == "Pin")
    invalidations.reset()
    invalidations.track("row b") { _ = list.swipeActions(.trailing, forRow: "b", in: interactions) }
    interactions.forItems(withReuseIdentifier: "pinned") { $0.trailingSwipeActions = { _, _ in nil } }
    #expect(invalidations.counts == ["row b": 1], "and one set for a kind")
    list.stop()
  }

  @Test(
    "the actions come from the row's kind or from all, asked with the row's item and the source's position")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func resolved() async throws {
    let source = try BasicDataSource(sections: layout("A: a b' | B: c"))
    let list = await ObservedList(following: source, pacing: .immediate)
    let interactions = Self.interactions(recording: Recorded())
    let actions = try #require(list.swipeActions(.trailing, forRow: "c", in: interactions))
    #expect(actions.actions.map(\.title) == ["Archive c at 1.0"] && actions.performsFirstActionWithFullSwipe)
    #expect(
      list.swipeActions(.trailing, forRow: "b", in: interactions)?.actions.first?.title == "Archive b' at 0.1"
    )
    #expect(list.swipeActions(.leading, forRow: "b", in: interactions) == nil, "no leading closure")
    #expect(list.swipeActions(.trailing, forRow: "zz", in: interactions) == nil, "no such row")
    let pinned = list.swipeActions(.trailing, forRow: "a", in: interactions, reuseIdentifier: "pinned")
    #expect(pinned?.actions.isEmpty == true && pinned?.performsFirstActionWithFullSwipe == false)
  }

  @Test("a row's actions are asked again when its item changes, not when rows come, go or move around it")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func observedPerRow() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c d"))
    let list = await ObservedList(following: source, pacing: .immediate)
    let interactions = Self.interactions(recording: Recorded())
    let invalidations = Invalidations()
    invalidations.track("c's actions") { _ = list.swipeActions(.trailing, forRow: "c", in: interactions) }
    var version = try await source.insertItems([TestItem("new")], before: "a")
    #expect(try await list.reached(version))
    try await source.moveItem("d", before: "b")
    version = try await source.deleteItems(["a"])
    #expect(try await list.reached(version))
    #expect(invalidations.counts.isEmpty, "inserts, moves and deletes around the row")
    version = try await source.replaceItem(TestItem("c", version: 1))
    #expect(try await list.reached(version))
    #expect(invalidations.counts == ["c's actions": 1], "the row's own edit")
  }

  @Test("an action runs on the item the row shows when picked; an error is reported; a row gone runs nothing")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func performed() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c"))
    let list = await ObservedList(following: source, pacing: .immediate)
    let done = Recorded()
    let interactions = Self.interactions(recording: done)
    let action = try #require(list.swipeActions(.trailing, forRow: "b", in: interactions)?.actions.first)
    var version = try await source.replaceItem(TestItem("b", version: 2))
    try await source.moveItem("b", before: "a")
    version = await source.version
    #expect(try await list.reached(version))
    let task = try #require(list.perform(action, onRow: "b", in: interactions))
    #expect(await task.value)
    #expect(done.values == ["b'' at 0.0"], "the item and position now, not when the actions were made")

    version = try await source.replaceItem(TestItem("c", version: 9))
    #expect(try await list.reached(version))
    let refused = try #require(list.perform(action, onRow: "c", in: interactions))
    #expect(await refused.value == false)
    #expect(done.values.last == "failed c''''''''': ArchiveRefused()")

    version = try await source.deleteItems(["a"])
    #expect(try await list.reached(version))
    #expect(list.perform(action, onRow: "a", in: interactions) == nil)
    #expect(done.values.count == 3)
  }
}
