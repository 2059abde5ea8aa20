// An ordered list whose versions share structure: a B-tree of elements with subtree counts (a rope).

/// An ordered list that shares structure with the versions it was made from: a B-tree whose leaves hold
/// the elements and whose inner nodes know how many elements each child holds.
///
/// A copy costs O(1); an edit of a copy copies only the nodes on one path from the root (path copying),
/// so *k* edits of a version of *n* elements cost O(*k* log *n*) time and memory, and every earlier version
/// stays as it was. It is the building block of persistent snapshots: position ↔ element in
/// O(log *n*).
///
/// Every node but the root holds at least a quarter of its capacity, and every leaf is at the same depth,
/// so the height is O(log *n*) whatever sequence of edits made the list.
///
/// Each element carries an order label, and each node knows the largest label under it. When the labels
/// increase along the list (as ``SnapshotTree`` keeps them), ``rank(ofLabel:)`` finds an element's index
/// from its label in O(log *n*): the id index stores labels, which edits elsewhere never change, instead
/// of positions, which every insert before them would.
@usableFromInline struct PersistentList<Element: OrderLabeled> {
  /// Elements per leaf, at most.
  @inlinable static var leafCapacity: Int { 64 }
  /// Children per inner node, at most.
  @inlinable static var branchCapacity: Int { 32 }

  // The stored properties opt out of Swift's dynamic exclusivity checks, which cost about a fifth of an
  // edit: a node is written only by the one value that holds it uniquely (see `unique(_:)`), in
  // non-reentrant code that never holds two accesses to one property; shared nodes are only read.
  @usableFromInline final class Node: PersistentTreeNode {
    /// The elements under this node.
    @exclusivity(unchecked) @usableFromInline var count: Int
    /// A leaf's elements; empty for an inner node.
    @exclusivity(unchecked) @usableFromInline var elements: [Element]
    /// An inner node's children; empty for a leaf.
    @exclusivity(unchecked) @usableFromInline var children: [Node]
    /// The label of the last element under this node (0 when empty): the largest when labels increase.
    @exclusivity(unchecked) @usableFromInline var lastLabel: UInt64
    /// Whether the node is a leaf: stored, since unspecialised code would look up the metadata of
    /// `children`'s type to ask it.
    @usableFromInline let isLeaf: Bool

    @inlinable init(elements: [Element]) {
      self.count = elements.count
      self.elements = elements
      self.children = []
      self.lastLabel = elements.last?.orderLabel ?? 0
      self.isLeaf = true
    }

    @inlinable init(children: [Node]) {
      self.count = children.reduce(0) { $0 + $1.count }
      self.elements = []
      self.children = children
      self.lastLabel = children.last?.lastLabel ?? 0
      self.isLeaf = false
    }

    @inlinable init(copying node: Node) {
      count = node.count
      elements = node.elements
      children = node.children
      lastLabel = node.lastLabel
      isLeaf = node.isLeaf
    }

    /// Recomputes ``lastLabel`` from the last element or child.
    @inlinable func updateLastLabel() {
      lastLabel = (isLeaf ? elements.last?.orderLabel : children.last?.lastLabel) ?? 0
    }

    /// Whether the node holds fewer than a quarter of its capacity.
    @inlinable var isSmall: Bool {
      isLeaf
        ? elements.count < PersistentList.leafCapacity / 4
        : children.count < PersistentList.branchCapacity / 4
    }

    /// Whether the node holds more than its capacity.
    @inlinable var isOverfull: Bool {
      isLeaf ? elements.count > PersistentList.leafCapacity : children.count > PersistentList.branchCapacity
    }

    /// The child holding `index`, and `index` within it.
    /// - Complexity: O(branch capacity).
    @inlinable func child(containing index: Int) -> (child: Int, index: Int) {
      // Index loops, not `enumerated()`: unspecialised generic code pays a metadata lookup per iterator.
      var index = index
      var offset = 0
      let count = children.count
      while offset < count {
        let size = children[offset].count
        if index < size { return (offset, index) }
        index -= size
        offset += 1
      }
      // Only an insert at the very end gets here: it goes to the last child.
      return (children.count - 1, index + children[children.count - 1].count)
    }

    /// The child of an inner node where `label` is or would be, and the number of elements before it;
    /// `nil` for a leaf. Reads the children in place: no reference-counting call.
    /// - Complexity: O(branch capacity).
    @inlinable func step(toward label: UInt64) -> (child: Unmanaged<Node>, skipped: Int)? {
      if isLeaf { return nil }
      return children.withUnsafeBufferPointer { children in
        var child = 0
        var skipped = 0
        while child < children.count - 1 && children[child].lastLabel < label {
          skipped += children[child].count
          child += 1
        }
        return (Unmanaged.passUnretained(children[child]), skipped)
      }
    }

    /// The offset in a leaf of the first element labelled `label` or more.
    /// - Complexity: O(log leaf capacity).
    @inlinable func offset(ofLabel label: UInt64) -> Int {
      var low = 0
      var high = elements.count
      while low < high {
        let middle = (low + high) / 2
        if elements[middle].orderLabel < label { low = middle + 1 } else { high = middle }
      }
      return low
    }

    /// Splits an overfull node in two halves: this node keeps the first, the second is returned.
    @inlinable func split() -> Node {
      if isLeaf {
        let half = elements.count / 2
        let right = Node(elements: Array(elements[half...]))
        elements.removeSubrange(half...)
        count = elements.count
        updateLastLabel()
        return right
      }
      let half = children.count / 2
      let right = Node(children: Array(children[half...]))
      children.removeSubrange(half...)
      count -= right.count
      updateLastLabel()
      return right
    }
  }

  @usableFromInline var root: Node

  /// An empty list.
  @inlinable init() { root = Node(elements: []) }

  /// A list of `elements`, built bottom-up with nodes of even sizes (each at least half full).
  /// - Complexity: O(*n*).
  @inlinable init(_ elements: some Sequence<Element>) {
    let all = Array(elements)
    guard !all.isEmpty else {
      root = Node(elements: [])
      return
    }
    var level = Self.evenRanges(all.count, capacity: Self.leafCapacity).map { Node(elements: Array(all[$0])) }
    while level.count > 1 {
      let nodes = level
      level = Self.evenRanges(nodes.count, capacity: Self.branchCapacity).map {
        Node(children: Array(nodes[$0]))
      }
    }
    root = level[0]
  }

  /// `count` split into as few ranges of at most `capacity` as possible, of sizes differing by one at most.
  @inlinable static func evenRanges(_ count: Int, capacity: Int) -> [Range<Int>] {
    let parts = (count + capacity - 1) / capacity
    return (0..<parts).map { part in (part * count / parts)..<((part + 1) * count / parts) }
  }

  /// The number of elements.
  /// - Complexity: O(1).
  @inlinable var count: Int { root.count }

  /// The label of the last element; 0 when the list is empty.
  /// - Complexity: O(1).
  @inlinable var lastLabel: UInt64 { root.lastLabel }

  /// Whether the list is empty.
  @inlinable var isEmpty: Bool { root.count == 0 }

  /// The element at `index`.
  /// - Precondition: `0 <= index < count`.
  /// - Complexity: O(log *n*).
  @inlinable subscript(index: Int) -> Element {
    get {
      precondition(index >= 0 && index < count, "PersistentList: index \(index) out of 0..<\(count)")
      var node = root
      var index = index
      while !node.isLeaf {
        let (child, inner) = node.child(containing: index)
        node = node.children[child]
        index = inner
      }
      return node.elements[index]
    }
    set {
      precondition(index >= 0 && index < count, "PersistentList: index \(index) out of 0..<\(count)")
      Self.replace(at: index, with: newValue, in: &root)
    }
  }

  /// The number of elements whose label is less than `label`: the index of the element labelled `label`,
  /// or where one would be inserted.
  /// - Precondition: labels increase along the list.
  /// - Complexity: O(log *n*).
  @inlinable func rank(ofLabel label: UInt64) -> Int { descend(toLabel: label).rank }

  /// The index of the element labelled `label`, and the element.
  /// - Precondition: labels increase along the list, and one element has this label.
  /// - Complexity: O(log *n*): one descent, as ``rank(ofLabel:)``.
  @inlinable func find(label: UInt64) -> (index: Int, element: Element) {
    Self.element(at: descend(toLabel: label), labelled: label)
  }

  /// ``find(label:)`` through ``retainingDescend(toLabel:)``: the log-derived diff's lookup.
  /// - Complexity: O(log *n*).
  @inlinable func findRetaining(label: UInt64) -> (index: Int, element: Element) {
    Self.element(at: retainingDescend(toLabel: label), labelled: label)
  }

  /// The element a descent found, and its index; stops when it is not labelled `label`.
  @inlinable static func element(
    at place: (leaf: Node, offset: Int, rank: Int), labelled label: UInt64
  ) -> (index: Int, element: Element) {
    precondition(
      place.offset < place.leaf.elements.count && place.leaf.elements[place.offset].orderLabel == label,
      "PersistentList: no element labelled \(label)")
    return (place.rank, place.leaf.elements[place.offset])
  }

  /// The leaf where `label` is or would be, the offset there, and the rank in the whole list: the number
  /// of elements labelled less than `label`. A label past the last goes to the end of the last leaf.
  ///
  /// It makes no reference-counting call but the one that returns the leaf: the nodes are passed
  /// `Unmanaged` while `root` keeps them alive, and each level is read in place (``Node/step(toward:)``).
  /// Retaining what it compares, as ``retainingDescend(toLabel:)`` does, costs four atomic operations per
  /// child. The source's lookups on its actor, and every reader of a snapshot, use this one.
  @inlinable func descend(toLabel label: UInt64) -> (leaf: Node, offset: Int, rank: Int) {
    var rank = 0
    let leaf = withExtendedLifetime(root) { () -> Node in
      var node = Unmanaged.passUnretained(root)
      while let step = node._withUnsafeGuaranteedRef({ $0.step(toward: label) }) {
        rank += step.skipped
        node = step.child
      }
      return node.takeUnretainedValue()
    }
    let offset = leaf.offset(ofLabel: label)
    return (leaf, offset, rank + offset)
  }

  /// ``descend(toLabel:)`` as the log-derived diff runs it: through an `unowned(unsafe)` binding, with
  /// which Swift retains and releases each node and child the loop compares, about three times slower.
  ///
  /// Slower on purpose, and measured so: the diff runs beside the writers, and on two cores a quick diff
  /// leaves the second core idle between batches; the runtime then wakes it for every writer's hop, and
  /// `throughput` is about half as fast. Benchmarks/HISTORY.md has the figures; measure
  /// `throughput` on two cores before changing which lookups use which descent.
  @inlinable func retainingDescend(toLabel label: UInt64) -> (leaf: Node, offset: Int, rank: Int) {
    var rank = 0
    let leaf = withExtendedLifetime(root) { () -> Node in
      unowned(unsafe) var node = root
      while !node.isLeaf {
        var child = 0
        let count = node.children.count
        while child < count - 1 && node.children[child].lastLabel < label {
          rank += node.children[child].count
          child += 1
        }
        node = node.children[child]
      }
      return node
    }
    let offset = leaf.offset(ofLabel: label)
    return (leaf, offset, rank + offset)
  }

  /// Inserts `element` at `index`.
  /// - Precondition: `0 <= index <= count`.
  /// - Complexity: O(log *n*); copies the nodes on one path when they are shared.
  @inlinable mutating func insert(_ element: Element, at index: Int) {
    precondition(index >= 0 && index <= count, "PersistentList: insert at \(index) out of 0...\(count)")
    if let sibling = Self.insert(element, at: index, in: &root) {
      root = Node(children: [root, sibling])
    }
  }

  /// Appends `element`.
  /// - Complexity: O(log *n*).
  @inlinable mutating func append(_ element: Element) { insert(element, at: count) }

  /// Removes and returns the element at `index`.
  /// - Precondition: `0 <= index < count`.
  /// - Complexity: O(log *n*); copies the nodes on one path when they are shared.
  @discardableResult
  @inlinable mutating func remove(at index: Int) -> Element {
    precondition(index >= 0 && index < count, "PersistentList: remove at \(index) out of 0..<\(count)")
    let removed = Self.remove(at: index, in: &root)
    if !root.isLeaf && root.children.count == 1 { root = root.children[0] }
    return removed
  }

  /// The elements in order.
  /// - Complexity: O(*n*).
  @inlinable var elements: [Element] {
    var result: [Element] = []
    result.reserveCapacity(count)
    Self.append(root, to: &result)
    return result
  }

  // MARK: - Path copying

  /// Makes `node` unshared, copying it if another version holds it.
  @inlinable static func unique(_ node: inout Node) {
    if !isKnownUniquelyReferenced(&node) { node = Node(copying: node) }
  }

  @inlinable static func replace(at index: Int, with element: Element, in node: inout Node) {
    modify(at: index, in: &node) { $0 = element }
  }

  /// Changes the element at `index` in place, in one descent.
  /// - Precondition: `0 <= index < count`.
  /// - Complexity: O(log *n*); copies the nodes on one path when they are shared.
  @inlinable mutating func modify(at index: Int, _ body: (inout Element) -> Void) {
    precondition(index >= 0 && index < count, "PersistentList: index \(index) out of 0..<\(count)")
    Self.modify(at: index, in: &root, body)
  }

  @inlinable static func modify(at index: Int, in node: inout Node, _ body: (inout Element) -> Void) {
    unique(&node)
    if node.isLeaf {
      body(&node.elements[index])
    } else {
      let (child, inner) = node.child(containing: index)
      modify(at: inner, in: &node.children[child], body)
    }
    node.updateLastLabel()
  }

  /// Inserts into the subtree `node`; returns a new right sibling if `node` split.
  @inlinable static func insert(_ element: Element, at index: Int, in node: inout Node) -> Node? {
    unique(&node)
    node.count += 1
    if node.isLeaf {
      node.elements.insert(element, at: index)
    } else {
      let (child, inner) = node.child(containing: index)
      if let sibling = insert(element, at: inner, in: &node.children[child]) {
        node.children.insert(sibling, at: child + 1)
      }
    }
    node.updateLastLabel()
    return node.isOverfull ? node.split() : nil
  }

  @inlinable static func remove(at index: Int, in node: inout Node) -> Element {
    unique(&node)
    node.count -= 1
    if node.isLeaf {
      defer { node.updateLastLabel() }
      return node.elements.remove(at: index)
    }
    let (child, inner) = node.child(containing: index)
    let removed = remove(at: inner, in: &node.children[child])
    rebalance(child, in: node)
    node.updateLastLabel()
    return removed
  }

  /// Merges a small child of the unshared `parent` with a neighbour, splitting the result again when it is
  /// overfull, so every node but the root stays at least a quarter full.
  @inlinable static func rebalance(_ child: Int, in parent: Node) {
    guard parent.children[child].isSmall, parent.children.count > 1 else { return }
    let left = child > 0 ? child - 1 : child
    unique(&parent.children[left])
    let merged = parent.children[left]
    let right = parent.children.remove(at: left + 1)
    merged.count += right.count
    if merged.isLeaf {
      merged.elements += right.elements
    } else {
      merged.children += right.children
    }
    merged.updateLastLabel()
    if merged.isOverfull { parent.children.insert(merged.split(), at: left + 1) }
  }

  @inlinable static func append(_ node: Node, to result: inout [Element]) {
    if node.isLeaf {
      result += node.elements
    } else {
      for child in node.children { append(child, to: &result) }
    }
  }
}

extension PersistentList {
  /// Whether the two lists hold equal elements by `same`, in order. Subtrees the lists share are skipped
  /// without a look, so two versions made from each other by *k* edits compare in O(*k* log *n*) when
  /// their shapes agree; O(*n*) otherwise.
  @inlinable func elementsEqual(_ other: PersistentList, by same: (Element, Element) -> Bool) -> Bool {
    func equal(_ left: Node, _ right: Node) -> Bool {
      if left === right { return true }
      if left.count != right.count { return false }
      if left.isLeaf && right.isLeaf { return zip(left.elements, right.elements).allSatisfy(same) }
      if !left.isLeaf && !right.isLeaf && left.children.count == right.children.count
        && zip(left.children, right.children).allSatisfy({ $0.count == $1.count })
      {
        return zip(left.children, right.children).allSatisfy(equal)
      }
      var leftElements: [Element] = []
      var rightElements: [Element] = []
      Self.append(left, to: &leftElements)
      Self.append(right, to: &rightElements)
      return zip(leftElements, rightElements).allSatisfy(same)
    }
    return equal(root, other.root)
  }
}

extension PersistentList {
  /// The index of the first element for which `isAfter` holds, or ``count`` when none does: the place of
  /// a value in a sorted list. `isAfter` must be false for a prefix of the list and true for the rest.
  /// - Complexity: O(log *n* · *h*) calls of `isAfter` and steps, for the height *h* (O(log *n*)): a binary
  ///   search over each node's children, each probe reading the last element under a child.
  @inlinable func partitioningIndex(where isAfter: (Element) -> Bool) -> Int {
    var node = root
    var rank = 0
    while !node.isLeaf {
      var low = 0
      var high = node.children.count - 1
      while low < high {
        let middle = (low + high) / 2
        if isAfter(Self.lastElement(under: node.children[middle])) { high = middle } else { low = middle + 1 }
      }
      for child in 0..<low { rank += node.children[child].count }
      node = node.children[low]
    }
    var low = 0
    var high = node.elements.count
    while low < high {
      let middle = (low + high) / 2
      if isAfter(node.elements[middle]) { high = middle } else { low = middle + 1 }
    }
    return rank + low
  }

  /// The last element under `node`, which holds one.
  /// - Complexity: O(*h*).
  @inlinable static func lastElement(under node: Node) -> Element {
    var node = node
    while !node.isLeaf { node = node.children[node.children.count - 1] }
    return node.elements[node.elements.count - 1]
  }
}

extension PersistentList: Sequence {
  /// Walks the leaves in order.
  @usableFromInline struct Iterator: IteratorProtocol {
    /// The inner nodes on the way down, each with the index of the child to visit next.
    @usableFromInline var path: [(node: Node, next: Int)]
    @usableFromInline var leaf: [Element] = []
    @usableFromInline var position = 0

    @inlinable init(root: Node) { path = [(root, 0)] }

    @inlinable mutating func next() -> Element? {
      while position == leaf.count {
        guard let (node, next) = path.popLast() else { return nil }
        if node.isLeaf {
          (leaf, position) = (node.elements, 0)
        } else if next < node.children.count {
          path.append((node, next + 1))
          path.append((node.children[next], 0))
        }
      }
      defer { position += 1 }
      return leaf[position]
    }
  }

  @inlinable func makeIterator() -> Iterator { Iterator(root: root) }

  @inlinable var underestimatedCount: Int { count }
}

extension PersistentList: Sendable where Element: Sendable {}
// Safe: nodes are only mutated through `unique(_:)`, which copies any node another version can reach, so
// a node shared between values (and so between tasks) is never written; an unshared one belongs to one
// value, which Swift's exclusivity rules give to one task at a time.
extension PersistentList.Node: @unchecked Sendable where Element: Sendable {}

extension PersistentList {
  /// The B-tree's invariants, for tests; empty when all hold: counts add up, every leaf is at the same
  /// depth, no node is over its capacity, and every node but the root is at least a quarter full.
  @inlinable var violations: [String] {
    var found: [String] = []
    var leafDepths = Set<Int>()
    func visit(_ node: Node, depth: Int, isRoot: Bool) {
      if node.isOverfull { found.append("a node over capacity at depth \(depth)") }
      if !isRoot && node.isSmall { found.append("a node under a quarter full at depth \(depth)") }
      if node.isLeaf {
        leafDepths.insert(depth)
        if node.count != node.elements.count { found.append("a leaf's count is wrong at depth \(depth)") }
        if node.lastLabel != node.elements.last?.orderLabel ?? 0 {
          found.append("a leaf's last label is wrong at depth \(depth)")
        }
        return
      }
      if node.count != node.children.reduce(0, { $0 + $1.count }) {
        found.append("an inner node's count is wrong at depth \(depth)")
      }
      if node.lastLabel != node.children.last?.lastLabel ?? 0 {
        found.append("an inner node's last label is wrong at depth \(depth)")
      }
      for child in node.children { visit(child, depth: depth + 1, isRoot: false) }
    }
    visit(root, depth: 0, isRoot: true)
    if leafDepths.count > 1 { found.append("leaves at depths \(leafDepths.sorted())") }
    return found
  }

  /// The height of the tree: 1 for a single leaf.
  @inlinable var height: Int {
    var height = 1
    var node = root
    while !node.isLeaf {
      node = node.children[0]
      height += 1
    }
    return height
  }

  /// Every node of the tree, for tests that check what two versions share.
  @inlinable var nodes: [Node] { root.subtree }

}

/// An element of a ``PersistentList``: it carries a label, which increases along the list when the list is
/// used for lookups by label.
@usableFromInline protocol OrderLabeled {
  /// The element's order label.
  var orderLabel: UInt64 { get }
}

/// A value with an order label: the element of a snapshot's item lists.
@usableFromInline struct Labeled<Value>: OrderLabeled {
  /// The label; increases along the list.
  @usableFromInline var orderLabel: UInt64
  /// The value.
  @usableFromInline var value: Value

  @inlinable init(orderLabel: UInt64, value: Value) {
    self.orderLabel = orderLabel
    self.value = value
  }
}

extension Labeled: Sendable where Value: Sendable {}
extension Labeled: Equatable where Value: Equatable {}
