// Fences the cost of an outline's batches: hashes and `==` for one parent edit, one expansion and one
// collapse must not grow with the number of nodes.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore

/// A node whose id counts its hashes and `==`.
struct CountingNode: OutlineNode {
  var id: CountingID
  var version = 0
  var children: [CountingNode] = []
}

// A 30-minute hang guard: CI runs this suite (at its fixed sizes, up to 200,000 nodes) beside the exhaustive
// suites, which hold both threads of a two-core pool for minutes, and its tests wait for a thread on that clock.
@Suite("Outline complexity", .timeLimit(.minutes(30)))
struct OutlineComplexityTests {
  typealias Forest = Section<Int, CountingNode>

  /// Hashes plus `==` of each step over `count` top-level nodes with two children each, all expanded.
  static func calls(count: Int) async throws -> [String: Int] {
    let counter = CallCounter()
    func id(_ value: Int) -> CountingID { CountingID(value: value, counter: counter) }
    func node(_ value: Int, version: Int = 0) -> CountingNode {
      CountingNode(
        id: id(value), version: version,
        children: [CountingNode(id: id(-2 * value - 1)), CountingNode(id: id(-2 * value - 2))])
    }
    let parent = try BasicDataSource(sections: [Forest(id: 0, items: (0..<count).map { node($0) })])
    try await parent.replaceItem(node(1, version: 1))  // builds the parent's persistent form, once
    let outline = try await OutlineDataSource(parent, expanded: Set((0..<count).map(id)))
    let subscription = await outline.subscribe()
    var batches = subscription.batches.makeAsyncIterator()
    let steps: [(String, () async throws -> Void)] = [
      ("replace a node", { try await parent.replaceItem(node(count / 2, version: 2)) }),
      ("insert a node", { try await parent.insertItems([node(count)], before: id(count / 3)) }),
      ("move a node far", { try await parent.moveItem(id(3), before: id(count - 2)) }),
      ("delete a node", { try await parent.deleteItems([id(count / 4)]) }),
      ("collapse a node", { await outline.collapse([id(count / 5)]) }),
      ("expand a node", { try await outline.expand([id(count / 5)]) }),
    ]
    let result = try await callsPerStep(steps, of: outline, counting: counter, batches: &batches)
    let sections = await outline.snapshot.sections
    // Every node is a row, but the inserted node's children: it is not expanded.
    #expect(sections[0].items.count == 3 * count - 2)
    subscription.cancel()
    return result
  }

  /// Hashes plus `==` of one edit of a leaf deep in one tree: a root with 16 children per node down to
  /// `depth`, every node expanded, edited in place as a user edits a tree value.
  static func deepEdit(depth: Int, inserting: Bool) async throws -> Int {
    let counter = CallCounter()
    var made = 0
    func tree(_ level: Int) -> CountingNode {
      made += 1
      let node = CountingNode(id: CountingID(value: made, counter: counter))
      guard level < depth else { return node }
      return CountingNode(id: node.id, children: (0..<16).map { _ in tree(level + 1) })
    }
    var root = tree(0)
    var all: [CountingID] = []
    func collect(_ node: CountingNode) {
      all.append(node.id)
      node.children.forEach(collect)
    }
    collect(root)
    let parent = try BasicDataSource(sections: [Forest(id: 0, items: [root])])
    let outline = try await OutlineDataSource(parent, expanded: Set(all))
    var path: [Int] = []
    for level in 0..<depth { path.append((level * 7) % 16) }
    let added = CountingNode(id: CountingID(value: -1, counter: counter))
    func edit(_ node: inout CountingNode, _ rest: ArraySlice<Int>) {
      guard let first = rest.first else { return node.version += 1 }
      // Inserting: a new leaf among the children of the last node above the leaf, before it.
      if inserting && rest.count == 1 { node.children.insert(added, at: first) }
      edit(&node.children[first + (inserting && rest.count == 1 ? 1 : 0)], rest.dropFirst())
    }
    edit(&root, path[...])
    var leaf = root
    for (level, index) in path.enumerated() {
      leaf = leaf.children[index + (inserting && level == path.count - 1 ? 1 : 0)]
    }
    await outline.settled()
    counter.reset()
    try await parent.replaceItem(root)
    await outline.settled()
    let calls = counter.hashes + counter.equalities
    let row = try #require(await outline.snapshot.item(withID: leaf.id))
    #expect(row.node.version == 1 && row.depth == depth)
    #expect(await outline.snapshot.itemCount == all.count + (inserting ? 1 : 0))
    if inserting {
      let snapshot = await outline.snapshot
      let position = try #require(snapshot.position(ofItem: added.id))
      #expect(snapshot[position].depth == depth)
      #expect(snapshot[ItemPosition(section: 0, item: position.item + 1)].id == leaf.id)
    }
    return calls
  }

  @Test(
    "a leaf edited or inserted deep in one large tree costs its path and the siblings along it, not the tree",
    arguments: [false, true])
  func deep(inserting: Bool) async throws {
    let small = try await Self.deepEdit(depth: 2, inserting: inserting)  // 273 nodes
    let large = try await Self.deepEdit(depth: 4, inserting: inserting)  // 69,905 nodes
    let what = inserting ? "insert" : "edit"
    print("Outline calls, a deep \(what): 273 nodes \(small), 69,905 nodes \(large) hashes and ==")
    #expect(large <= 4 * small && large <= 1_200, "\(small) -> \(large)")
  }

  @Test("a parent edit, an expansion and a collapse hash and compare as often at 200,000 nodes as at 6,000")
  func flat() async throws {
    let small = try await Self.calls(count: 2_000)
    let large = try await Self.calls(count: 66_666)
    for name in small.keys.sorted() {
      print(
        "Outline calls, \(name): 6,000 nodes \(small[name]!), 200,000 nodes \(large[name]!) hashes and ==")
      #expect(large[name]! <= 2 * small[name]! + 20, "\(name): \(small[name]!) -> \(large[name]!)")
      #expect(large[name]! <= 400, "\(name): \(large[name]!)")
    }
  }
}

// `<` counts as a comparison, with `==`: sibling lists are searched by it.
extension CountingID: Comparable {
  static func < (lhs: CountingID, rhs: CountingID) -> Bool {
    lhs.counter.countEquality()
    return lhs.value < rhs.value
  }
}

/// Hashes plus comparisons of each of `steps`, from a settled `outline` to the outline settled again; each
/// step must publish a batch.
func callsPerStep<Source: DataSourceType>(
  _ steps: [(String, () async throws -> Void)], of outline: Source, counting counter: CallCounter,
  batches: inout AsyncStream<UpdateBatch<Source.Section>>.Iterator
) async throws -> [String: Int] {
  var result: [String: Int] = [:]
  for (name, step) in steps {
    await outline.settled()
    counter.reset()
    try await step()
    await outline.settled()
    result[name] = counter.hashes + counter.equalities
    #expect(await batches.next() != nil, "\(name): no batch")
  }
  return result
}

/// A record whose id counts its hashes, `==` and `<`.
struct CountingRecord: OutlineRecord {
  var id: CountingID
  var parentID: CountingID?
  var siblingOrder: Int
  var version = 0
}

extension OutlineComplexityTests {
  /// Hashes plus comparisons of each step over `count` top-level records with two children each, all
  /// expanded.
  static func recordCalls(count: Int) async throws -> [String: Int] {
    let counter = CallCounter()
    func id(_ value: Int) -> CountingID { CountingID(value: value, counter: counter) }
    func children(of top: Int) -> [CountingRecord] {
      [-2 * top - 1, -2 * top - 2].map { CountingRecord(id: id($0), parentID: id(top), siblingOrder: $0) }
    }
    let records = (0..<count).flatMap { [CountingRecord(id: id($0), siblingOrder: $0)] + children(of: $0) }
    let parent = try BasicDataSource(sections: [Section(id: 0, items: records)])
    // Builds the parent's persistent form, once.
    try await parent.replaceItem(CountingRecord(id: id(1), siblingOrder: 1, version: 1))
    let outline = try await RecordOutlineDataSource(parent, expanded: Set((0..<count).map(id)))
    let subscription = await outline.subscribe()
    var batches = subscription.batches.makeAsyncIterator()
    let steps: [(String, () async throws -> Void)] = [
      (
        "edit a record",
        {
          try await parent.replaceItem(CountingRecord(id: id(count / 2), siblingOrder: count / 2, version: 2))
        }
      ),
      (
        "insert a child",
        {
          try await parent.appendItems(
            [CountingRecord(id: id(count), parentID: id(count / 3), siblingOrder: 0)], toSection: 0)
        }
      ),
      (
        "move a record far",
        {
          try await parent.replaceItem(CountingRecord(id: id(-7), parentID: id(count - 2), siblingOrder: -1))
        }
      ),
      (
        "delete a subtree",
        { try await parent.deleteItems([id(count / 4), id(-2 * (count / 4) - 1), id(-2 * (count / 4) - 2)]) }
      ),
      ("collapse a record", { await outline.collapse([id(count / 5)]) }),
      ("expand a record", { try await outline.expand([id(count / 5)]) }),
    ]
    let result = try await callsPerStep(steps, of: outline, counting: counter, batches: &batches)
    #expect(await outline.snapshot.itemCount == 3 * count - 2)
    subscription.cancel()
    return result
  }

  @Test(
    "a record outline's edit, move, insert, delete, expansion and collapse cost as much at 200,000 records as at 6,000"
  )
  func records() async throws {
    let small = try await Self.recordCalls(count: 2_000)
    let large = try await Self.recordCalls(count: 66_666)
    for name in small.keys.sorted() {
      print(
        "Record outline calls, \(name): 6,000 records \(small[name]!), 200,000 records \(large[name]!) hashes and comparisons"
      )
      #expect(large[name]! <= 2 * small[name]! + 40, "\(name): \(small[name]!) -> \(large[name]!)")
      #expect(large[name]! <= 600, "\(name): \(large[name]!)")
    }
  }
}
