// OutlineDataSource against its model (the trees flattened with the expansion state), under random tree
// edits and expansions, with two outlines of one parent, bad trees and the conformance suite.

import SimpleSource
import SimpleSourceTesting
import Testing

struct TreeNode: OutlineNode, CustomStringConvertible {
  var id: String
  var version = 0
  var children: [TreeNode] = []

  var description: String {
    children.isEmpty ? id : "\(id)(\(children.map(\.description).joined(separator: " ")))"
  }
}

typealias Forest = Section<String, TreeNode>

/// Every node id, depth first.
func ids(_ nodes: [TreeNode]) -> [String] { nodes.flatMap { [$0.id] + ids($0.children) } }

/// The model: each section's nodes, each followed by its children when expanded, recursively.
func flattened(_ sections: [Forest], expanded: Set<String>) -> [[String]] {
  func rows(_ node: TreeNode, _ depth: Int) -> [String] {
    ["\(depth):\(node.id)"]
      + (expanded.contains(node.id) ? node.children.flatMap { rows($0, depth + 1) } : [])
  }
  return sections.map { $0.items.flatMap { rows($0, 0) } }
}

/// The model's rows in full: node, depth and expansion.
func flattenedRows(_ sections: [Forest], expanded: Set<String>) -> [[OutlineRow<TreeNode>]] {
  func rows(_ node: TreeNode, _ depth: Int) -> [OutlineRow<TreeNode>] {
    let isExpanded = expanded.contains(node.id)
    return [OutlineRow(node: node, depth: depth, isExpanded: isExpanded)]
      + (isExpanded ? node.children.flatMap { rows($0, depth + 1) } : [])
  }
  return sections.map { $0.items.flatMap { rows($0, 0) } }
}

func rows(_ snapshot: Snapshot<OutlineSection<Forest>>) -> [[String]] {
  snapshot.sections.map { $0.items.map { "\($0.depth):\($0.id)" } }
}

/// A random edit of a forest: insert a node somewhere, delete one, move one among its siblings or to
/// another parent, or change one's content. Ids are fresh, so the result is always a tree.
struct RandomTreeEdit: Sendable {
  let kind: Int
  let picks: [Int]
  let fresh: String

  init(using random: inout SeededGenerator, fresh: String) {
    kind = Int.random(in: 0..<4, using: &random)
    picks = (0..<4).map { _ in Int.random(in: 0..<1_000, using: &random) }
    self.fresh = fresh
  }

  func apply(to sections: inout [Forest]) {
    // Every node path: section index, then child indices.
    var paths: [[Int]] = []
    func collect(_ nodes: [TreeNode], _ prefix: [Int]) {
      for (index, node) in nodes.enumerated() {
        paths.append(prefix + [index])
        collect(node.children, prefix + [index])
      }
    }
    for (index, section) in sections.enumerated() { collect(section.items, [index]) }
    func modify(_ path: [Int], _ body: (inout [TreeNode]) -> Void) {
      // `path` names a list of siblings: a section's items, or a node's children.
      func descend(_ nodes: inout [TreeNode], _ rest: ArraySlice<Int>) {
        if rest.isEmpty { return body(&nodes) }
        descend(&nodes[rest.first!].children, rest.dropFirst())
      }
      descend(&sections[path[0]].items, path.dropFirst())
    }
    guard !paths.isEmpty, kind != 0 else {
      let parent = paths.isEmpty ? [picks[0] % sections.count] : paths[picks[0] % paths.count]
      modify(parent) { $0.insert(TreeNode(id: fresh), at: picks[1] % ($0.count + 1)) }
      return
    }
    let path = paths[picks[0] % paths.count]
    let siblings = Array(path.dropLast())
    let index = path[path.count - 1]
    switch kind {
    case 1:
      modify(siblings) { $0.remove(at: index) }
    case 2:
      var moved: TreeNode?
      modify(siblings) { moved = $0.remove(at: index) }
      // Re-collect: a new parent that is not inside the moved subtree (it is gone now).
      paths = []
      for (section, forest) in sections.enumerated() { collect(forest.items, [section]) }
      let targets = [[picks[2] % sections.count]] + paths
      modify(targets[picks[3] % targets.count]) { $0.insert(moved!, at: picks[1] % ($0.count + 1)) }
    default:
      modify(siblings) { $0[index].version += 1 }
    }
  }
}

@Suite("OutlineDataSource", .timeLimit(.minutes(30)))
struct OutlineDataSourceTests {
  static let settings = ProjectedDataSourceTests.settings

  static func forest() -> [Forest] {
    [
      Forest(
        id: "A",
        items: [
          TreeNode(
            id: "a", children: [TreeNode(id: "a1"), TreeNode(id: "a2", children: [TreeNode(id: "a21")])]),
          TreeNode(id: "b"),
        ]),
      Forest(id: "B", items: [TreeNode(id: "c", children: [TreeNode(id: "c1")])]),
    ]
  }

  @Test("after every batch two outlines of one parent show its trees flattened with their own expansion")
  func model() async throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 70))
    var batches = 0
    for run in 0..<settings.cases {
      let parent = try BasicDataSource(sections: Self.forest())
      let outlines = [
        try await OutlineDataSource(parent, expanded: ["a"]), try await OutlineDataSource(parent),
      ]
      let recorders = [
        await BatchRecorder(await outlines[0].subscribe(), refreshStyle: .reconfigure),
        await BatchRecorder(await outlines[1].subscribe()),
      ]
      var expanded: [Set<String>] = [["a"], []]
      for step in 0..<12 {
        let place = "run \(run) step \(step); \(settings.replay)"
        if Bool.random(using: &random) {
          let edit = RandomTreeEdit(using: &random, fresh: "n\(step)")
          _ = try await parent.update { edit.apply(to: &$0) }
        } else {
          let which = Int.random(in: 0..<2, using: &random)
          let all = await parent.snapshot.sections.flatMap { ids($0.items) }
          if let id = all.randomElement(using: &random) {
            if expanded[which].contains(id) {
              await outlines[which].collapse([id])
              expanded[which].remove(id)
            } else {
              try await outlines[which].expand([id])
              expanded[which].insert(id)
            }
          }
        }
        let sections = await parent.snapshot.sections
        // A node that left the tree is no longer expanded.
        let present = Set(sections.flatMap { ids($0.items) })
        for which in 0..<2 { expanded[which].formIntersection(present) }
        for which in 0..<2 {
          await outlines[which].settled()
          #expect(await outlines[which].expanded == expanded[which], "\(place)")
          let shown = await outlines[which].snapshot
          #expect(rows(shown) == flattened(sections, expanded: expanded[which]), "\(place)")
          #expect(
            shown.sections.map(\.items) == flattenedRows(sections, expanded: expanded[which]), "\(place)")
          #expect(
            shown.sections.map(\.id) == sections.map(\.id) && shown.sections.allSatisfy(\.base.items.isEmpty))
        }
      }
      for (outline, recorder) in zip(outlines, recorders) {
        await recorder.showing(await outline.snapshot)
        let violations = await recorder.violations
        #expect(violations.isEmpty, "\(violations), run \(run); \(settings.replay)")
        batches += await recorder.batches.count
        await recorder.cancel()
      }
    }
    print("OutlineDataSource model: \(settings.cases) runs, \(batches) batches checked; \(settings.replay)")
  }

  @Test("expanding inserts the children, a changed child list is moves, inserts and deletes of its rows")
  func batches() async throws {
    let parent = try BasicDataSource(sections: Self.forest())
    let outline = try await OutlineDataSource(parent)
    let recorder = await BatchRecorder(await outline.subscribe())
    try await outline.expand(["a"])
    await recorder.showing(await outline.snapshot)
    var batch = try #require(await recorder.batches.last)
    #expect(batch.changeset.itemChanges.inserts.map(\.id) == ["a1", "a2"])
    #expect(batch.changeset.itemChanges.updates.map(\.id) == ["a"])  // its row now shows it expanded
    try await parent.update { $0[0].items[0].children.swapAt(0, 1) }
    await outline.settled()
    await recorder.showing(await outline.snapshot)
    batch = try #require(await recorder.batches.last)
    #expect(batch.changeset.itemChanges.moves.count == 1)
    #expect(batch.changeset.itemChanges.deletes.isEmpty && batch.changeset.itemChanges.inserts.isEmpty)
    await outline.collapse(["a"])
    await recorder.showing(await outline.snapshot)
    batch = try #require(await recorder.batches.last)
    #expect(Set(batch.changeset.itemChanges.deletes.map(\.id)) == ["a1", "a2"])
    #expect(await recorder.violations.isEmpty)
  }

  @Test("a deleted node leaves the expanded set, collapsing it is no error, and it comes back collapsed")
  func expansionFollowsDeletions() async throws {
    let parent = try BasicDataSource(sections: Self.forest())
    let outline = try await OutlineDataSource(parent, expanded: ["a", "a2", "gone"])
    #expect(await outline.expanded == ["a", "a2"], "an id not in the tree is not kept")
    let deleted = await parent.snapshot.sections[0].items[0]
    try await parent.update { $0[0].items.remove(at: 0) }  // a, with a1 and a2
    await outline.settled()
    #expect(await outline.expanded == [], "a and a2 left with the tree")
    await outline.collapse(["a"])  // gone: nothing to collapse, no error
    await #expect(throws: OutlineError(.unknownItem, id: "a")) { try await outline.expand(["a"]) }
    try await parent.update { $0[0].items.insert(deleted, at: 0) }
    await outline.settled()
    #expect(rows(await outline.snapshot)[0].prefix(2) == ["0:a", "0:b"], "back, collapsed")
    #expect(await outline.expanded == [])

    // Moved within one batch, a node stays expanded: it never left the tree.
    try await outline.expand(["a"])
    try await parent.update { sections in
      let node = sections[0].items.remove(at: 0)
      sections[1].items.append(node)
    }
    await outline.settled()
    #expect(await outline.expanded == ["a"])
    #expect(rows(await outline.snapshot)[1] == ["0:c", "0:a", "1:a1", "1:a2"])
  }

  @Test("unknown ids, cycles and duplicate ids are typed errors; nothing shown changes")
  func badTrees() async throws {
    let parent = try BasicDataSource(sections: Self.forest())
    let outline = try await OutlineDataSource(parent, expanded: ["a"])
    let before = await outline.snapshot
    await #expect(throws: OutlineError(.unknownItem, id: "zz")) { try await outline.expand(["zz"]) }
    #expect(await outline.expanded == ["a"])

    var errors = outline.errors.makeAsyncIterator()
    try await parent.update { $0[0].items[0].children[1].children.append(TreeNode(id: "a")) }
    await outline.settled()
    #expect(await errors.next() == OutlineError(.cycle, id: "a", path: ["a", "a2"]))
    try await parent.update { $0[0].items[0].children[1].children = [TreeNode(id: "b")] }
    await outline.settled()
    #expect(await errors.next() == OutlineError(.duplicateID, id: "b"))
    #expect(rows(await outline.snapshot) == rows(before))
    try await parent.update { $0[0].items[0].children[1].children = [] }
    await outline.settled()
    #expect(rows(await outline.snapshot) == [["0:a", "1:a1", "1:a2", "0:b"], ["0:c"]])

    let looped = try BasicDataSource(sections: [
      Forest(id: "L", items: [TreeNode(id: "x", children: [TreeNode(id: "x")])])
    ])
    await #expect(throws: OutlineError(.cycle, id: "x", path: ["x"])) {
      _ = try await OutlineDataSource(looped)
    }
  }

  @Test("keeps the contract (conformance suite), with expansions among the mutations")
  func conformance() async {
    var conformance = DataSourceConformance(
      makeSource: {
        let outline = try await OutlineDataSource(
          try BasicDataSource(sections: Self.forest()), expanded: ["a", "c"])
        return (source: outline, driver: outline)
      },
      subscriberCount: { $0.subscriberCount },
      // Its own state: the parent's forest flattened by plain code, with its expanded nodes (G10).
      expecting: { outline, _ in
        guard let parent = outline.parent as? BasicDataSource<Forest> else { return Snapshot() }
        let forest = await parent.snapshot.sections
        let rows = flattenedRows(forest, expanded: await outline.expanded)
        let sections = zip(forest, rows).map { OutlineSection(base: $0, items: $1) }
        return (try? Snapshot(sections)) ?? Snapshot()
      }
    ) { outline, random in
      if Int.random(in: 0..<4, using: &random) == 0 {
        let all = await outline.snapshot.sections.flatMap { $0.items.map(\.id) }
        if let id = all.randomElement(using: &random) { try await outline.expand([id]) }
      } else {
        let parent = try #require(outline.parent as? BasicDataSource<Forest>)
        let edit = RandomTreeEdit(using: &random, fresh: "n\(random.next())")
        try await parent.update { edit.apply(to: &$0) }
      }
    }
    conformance.runs = ConformanceTests.settings.cases
    let report = await conformance.run(seed: ConformanceTests.settings.seed(forShard: 6))
    print("Conformance, OutlineDataSource: \(report)")
    #expect(report.passed, "\(report)")
    #expect(report.batches > 0)
  }
}

extension OutlineDataSourceTests {
  @Test("a parent's refreshItems refreshes the node's row")
  func parentRefreshes() async throws {
    let parent = try BasicDataSource(sections: Self.forest())
    let outline = try await OutlineDataSource(parent)
    var batches = await outline.subscribe().batches.makeAsyncIterator()
    _ = try await parent.refreshItems(["a"])
    await outline.settled()
    // A later batch, so that a dropped refresh shows as a batch without it rather than none (the two
    // may reach this subscriber composed).
    try await parent.deleteItems(["b"])
    await outline.settled()
    let batch = try #require(await batches.next())
    #expect(batch.changeset.itemChanges.updates.map(\.id) == ["a"])
    #expect(batch.changeset.forcedRefreshes == ["a"])
  }
}
