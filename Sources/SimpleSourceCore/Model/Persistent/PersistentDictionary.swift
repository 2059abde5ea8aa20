// A dictionary whose versions share structure: a compressed hash-array mapped prefix tree (CHAMP).

/// A dictionary that shares structure with the versions it was made from: a hash trie of 32-way nodes,
/// each with a bitmap of the entries it holds inline and one of its children (the CHAMP layout of
/// Steindorfer and Vinju, as in swift-collections' `TreeDictionary`; written here from the paper's idea).
///
/// A copy costs O(1); an insert, update or removal copies only the nodes on one path, so *k* edits of a
/// version of *n* entries cost O(*k* log₃₂ *n*) time and memory, and earlier versions stay as they were.
/// Each key is hashed once per operation. Keys whose whole hashes are equal share a collision node at the
/// bottom. After a removal the trie is compacted (a node left with one entry is inlined into its parent),
/// so its shape depends only on its contents. It is the id → location index of persistent snapshots.
@usableFromInline struct PersistentDictionary<Key: Hashable, Value> {
  // The stored properties opt out of Swift's dynamic exclusivity checks, which cost about a fifth of an
  // edit: a node is written only by the one value that holds it uniquely (see `unique(_:)`), in
  // non-reentrant code that never holds two accesses to one property; shared nodes are only read.
  @usableFromInline final class Node: PersistentTreeNode {
    /// Bits of the slots holding an entry inline.
    @exclusivity(unchecked) @usableFromInline var dataMap: UInt32
    /// Bits of the slots holding a child.
    @exclusivity(unchecked) @usableFromInline var nodeMap: UInt32
    /// The inline entries, in slot order; a collision node's entries, in insertion order.
    @exclusivity(unchecked) @usableFromInline var entries: [(key: Key, value: Value)]
    /// The children, in slot order.
    @exclusivity(unchecked) @usableFromInline var children: [Node]
    /// Whether this is a collision node: entries whose whole hashes are equal, below the last level.
    @usableFromInline let isCollision: Bool

    @inlinable init(
      dataMap: UInt32 = 0, nodeMap: UInt32 = 0, entries: [(key: Key, value: Value)] = [],
      children: [Node] = [], isCollision: Bool = false
    ) {
      self.dataMap = dataMap
      self.nodeMap = nodeMap
      self.entries = entries
      self.children = children
      self.isCollision = isCollision
    }

    @inlinable init(copying node: Node) {
      dataMap = node.dataMap
      nodeMap = node.nodeMap
      entries = node.entries
      children = node.children
      isCollision = node.isCollision
    }

    /// One level of a lookup: where `key`, whose hash is `hash`, is from this node, whose slots start
    /// at bit `shift` of the hash.
    /// - Complexity: O(1); O(*k*) in a collision node's *k* entries.
    @inlinable func step(toward key: Key, hash: Int, shift: Int) -> LookupStep {
      if isCollision {
        guard let entry = entries.first(where: { $0.key == key }) else { return .absent }
        return .found(entry.value)
      }
      let bit = PersistentDictionary.bit(hash, shift)
      if dataMap & bit != 0 {
        let entry = entries[PersistentDictionary.index(dataMap, bit)]
        return entry.key == key ? .found(entry.value) : .absent
      }
      guard nodeMap & bit != 0 else { return .absent }
      return children.withUnsafeBufferPointer { children in
        .child(Unmanaged.passUnretained(children[PersistentDictionary.index(nodeMap, bit)]))
      }
    }

    /// A node holding only one entry, which its parent can hold inline instead.
    @inlinable var isSingleEntry: Bool { children.isEmpty && entries.count == 1 }
  }

  /// Where one level of a lookup leads.
  @usableFromInline enum LookupStep {
    /// The key's value.
    case found(Value)
    /// The key is not in the dictionary.
    case absent
    /// The child to look in next, passed unretained: the root keeps it alive.
    case child(Unmanaged<Node>)
  }

  @usableFromInline var root = Node()
  /// The number of entries.
  /// - Complexity: O(1).
  @usableFromInline var count = 0

  /// An empty dictionary.
  @inlinable init() {}

  /// Bits of the hash consumed per level.
  @inlinable static var bitsPerLevel: Int { 5 }

  /// The slot of `hash` at the level that starts at bit `shift`.
  @inlinable static func bit(_ hash: Int, _ shift: Int) -> UInt32 {
    1 << UInt32(truncatingIfNeeded: (UInt(bitPattern: hash) >> UInt(shift)) & 31)
  }

  /// The index, among the slots of `map`, of the slot `bit`.
  @inlinable static func index(_ map: UInt32, _ bit: UInt32) -> Int { (map & (bit &- 1)).nonzeroBitCount }

  /// The value for `key`, or `nil`; setting `nil` removes it.
  /// - Complexity: O(log₃₂ *n*); a setter copies one path when it is shared.
  @inlinable subscript(key: Key) -> Value? {
    get {
      let hash = key.hashValue
      // The root keeps every node on the way alive for the whole descent, so the descent passes them
      // unretained and reads them in place: no reference counting on nodes that other threads'
      // snapshots share.
      return withExtendedLifetime(root) { () -> Value? in
        var node = Unmanaged.passUnretained(root)
        var shift = 0
        while true {
          switch node._withUnsafeGuaranteedRef({ $0.step(toward: key, hash: hash, shift: shift) }) {
          case .found(let value): return value
          case .absent: return nil
          case .child(let child):
            node = child
            shift += Self.bitsPerLevel
          }
        }
      }
    }
    set {
      if let newValue {
        updateValue(newValue, forKey: key)
      } else {
        removeValue(forKey: key)
      }
    }
  }

  /// Sets the value of `key`.
  /// - Returns: The value it replaced, or `nil` if `key` was new.
  /// - Complexity: O(log₃₂ *n*).
  @discardableResult
  @inlinable mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
    let old = Self.update(key, value, hash: key.hashValue, shift: 0, in: &root)
    if old == nil { count += 1 }
    return old
  }

  /// Removes `key`.
  /// - Returns: Its value, or `nil` if it was not there.
  /// - Complexity: O(log₃₂ *n*).
  @discardableResult
  @inlinable mutating func removeValue(forKey key: Key) -> Value? {
    let old = Self.remove(key, hash: key.hashValue, shift: 0, in: &root)
    if old != nil { count -= 1 }
    return old
  }

  // MARK: - Path copying

  @inlinable static func unique(_ node: inout Node) {
    if !isKnownUniquelyReferenced(&node) { node = Node(copying: node) }
  }

  @inlinable static func update(_ key: Key, _ value: Value, hash: Int, shift: Int, in node: inout Node)
    -> Value?
  {
    unique(&node)
    if node.isCollision {
      if let index = node.entries.firstIndex(where: { $0.key == key }) {
        defer { node.entries[index].value = value }
        return node.entries[index].value
      }
      node.entries.append((key, value))
      return nil
    }
    let bit = bit(hash, shift)
    if node.dataMap & bit != 0 {
      let index = index(node.dataMap, bit)
      let existing = node.entries[index]
      if existing.key == key {
        node.entries[index].value = value
        return existing.value
      }
      // Two keys in one slot: they move down into a child of their own.
      node.entries.remove(at: index)
      node.dataMap ^= bit
      let child = pair(
        existing, hash: existing.key.hashValue, (key, value), hash: hash, shift: shift + bitsPerLevel)
      node.children.insert(child, at: Self.index(node.nodeMap, bit))
      node.nodeMap |= bit
      return nil
    }
    if node.nodeMap & bit != 0 {
      return update(
        key, value, hash: hash, shift: shift + bitsPerLevel, in: &node.children[index(node.nodeMap, bit)])
    }
    node.entries.insert((key, value), at: index(node.dataMap, bit))
    node.dataMap |= bit
    return nil
  }

  /// A node holding two entries of different keys whose hashes agree up to `shift`.
  @inlinable static func pair(
    _ first: (key: Key, value: Value), hash firstHash: Int, _ second: (key: Key, value: Value),
    hash secondHash: Int, shift: Int
  ) -> Node {
    if shift >= Int.bitWidth { return Node(entries: [first, second], isCollision: true) }
    let (firstBit, secondBit) = (bit(firstHash, shift), bit(secondHash, shift))
    if firstBit == secondBit {
      let child = pair(first, hash: firstHash, second, hash: secondHash, shift: shift + bitsPerLevel)
      return Node(nodeMap: firstBit, children: [child])
    }
    return Node(
      dataMap: firstBit | secondBit, entries: firstBit < secondBit ? [first, second] : [second, first])
  }

  @inlinable static func remove(_ key: Key, hash: Int, shift: Int, in node: inout Node) -> Value? {
    if node.isCollision {
      guard let index = node.entries.firstIndex(where: { $0.key == key }) else { return nil }
      unique(&node)
      return node.entries.remove(at: index).value
    }
    let bit = bit(hash, shift)
    if node.dataMap & bit != 0 {
      let index = index(node.dataMap, bit)
      guard node.entries[index].key == key else { return nil }
      unique(&node)
      node.dataMap ^= bit
      return node.entries.remove(at: index).value
    }
    guard node.nodeMap & bit != 0 else { return nil }
    let childIndex = index(node.nodeMap, bit)
    // Search before copying: removing an absent key copies nothing.
    guard contains(key, hash: hash, shift: shift + bitsPerLevel, in: node.children[childIndex]) else {
      return nil
    }
    unique(&node)
    let removed = remove(key, hash: hash, shift: shift + bitsPerLevel, in: &node.children[childIndex])
    let child = node.children[childIndex]
    if child.isSingleEntry {
      // Compaction: the child's last entry moves up into this node.
      node.children.remove(at: childIndex)
      node.nodeMap ^= bit
      node.entries.insert(child.entries[0], at: index(node.dataMap, bit))
      node.dataMap |= bit
    }
    return removed
  }

  @inlinable static func contains(_ key: Key, hash: Int, shift: Int, in node: Node) -> Bool {
    var node = node
    var shift = shift
    while true {
      if node.isCollision { return node.entries.contains { $0.key == key } }
      let bit = bit(hash, shift)
      if node.dataMap & bit != 0 { return node.entries[index(node.dataMap, bit)].key == key }
      guard node.nodeMap & bit != 0 else { return false }
      node = node.children[index(node.nodeMap, bit)]
      shift += bitsPerLevel
    }
  }
}

extension PersistentDictionary {
  /// Every entry, in no particular order.
  /// - Complexity: O(*n*).
  @inlinable var entries: [(key: Key, value: Value)] {
    var result: [(key: Key, value: Value)] = []
    result.reserveCapacity(count)
    var stack = [root]
    while let node = stack.popLast() {
      result += node.entries
      stack += node.children
    }
    return result
  }

  /// Every node of the trie, for tests that check what two versions share.
  @inlinable var nodes: [Node] { root.subtree }

  /// The trie's invariants, for tests; empty when all hold: bitmaps match the slots, maps do not overlap,
  /// entries sit in their hash's slot, no child below the root holds a single entry (compaction), and
  /// ``count`` is the number of entries.
  @inlinable var violations: [String] {
    var found: [String] = []
    var total = 0
    func visit(_ node: Node, shift: Int, isRoot: Bool) {
      total += node.entries.count
      if node.isCollision {
        if node.entries.count < 2 { found.append("a collision node with \(node.entries.count) entries") }
        if Set(node.entries.map { $0.key.hashValue }).count > 1 {
          found.append("a collision of unequal hashes")
        }
        return
      }
      if node.dataMap & node.nodeMap != 0 { found.append("a slot both inline and a child") }
      if node.dataMap.nonzeroBitCount != node.entries.count
        || node.nodeMap.nonzeroBitCount != node.children.count
      {
        found.append("bitmaps do not match the slots at shift \(shift)")
      }
      if !isRoot && node.isSingleEntry { found.append("an uncompacted single entry at shift \(shift)") }
      for entry in node.entries where node.dataMap & Self.bit(entry.key.hashValue, shift) == 0 {
        found.append("an entry outside its slot at shift \(shift)")
      }
      for child in node.children { visit(child, shift: shift + Self.bitsPerLevel, isRoot: false) }
    }
    visit(root, shift: 0, isRoot: true)
    if total != count { found.append("count \(count), but \(total) entries") }
    return found
  }
}

extension PersistentDictionary: Sendable where Key: Sendable, Value: Sendable {}
// Safe: as PersistentList's nodes. A node is only mutated through `unique(_:)`, which copies any node
// another version can reach, so a shared node is never written.
extension PersistentDictionary.Node: @unchecked Sendable where Key: Sendable, Value: Sendable {}
