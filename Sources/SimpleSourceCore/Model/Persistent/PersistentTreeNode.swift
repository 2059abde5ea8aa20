// What the persistent structures' nodes share: children, and a walk over a subtree.

/// A node of a persistent tree, with its children.
@usableFromInline protocol PersistentTreeNode: AnyObject {
  /// The node's children, in order.
  var children: [Self] { get }
}

extension PersistentTreeNode {
  /// This node and every node below it, depth first.
  /// - Complexity: O(*n*) in the number of nodes.
  @inlinable var subtree: [Self] {
    var result: [Self] = []
    var stack = [self]
    while let node = stack.popLast() {
      result.append(node)
      stack += node.children
    }
    return result
  }
}
