// A child's batch placed in the composite in O(k log n + sections): the touched items are moved in the
// composite's persistent tree, and the composite's batch is derived from the touched ids.

extension Snapshot {
  /// This snapshot (a composite) after a child's batch `changeset`, when the child's sections are
  /// `offset..<offset + changeset.source.sectionCount` here and the batch keeps the child's sections (ids
  /// and order; their own content may change).
  ///
  /// Items the child only edited are replaced where they are; the others it touched are removed from the
  /// child's sections and inserted where the child now has them, in the child's order, so each lands
  /// after every item that precedes it. Nothing the child did not touch is visited.
  ///
  /// - Returns: The new snapshot and the composite's batch; `nil` when the child's batch inserts, deletes
  ///   or moves sections (the caller replaces the child's sections then).
  /// - Throws: ``DataSourceError`` naming an item id the child now has that another child shows; nothing
  ///   is changed.
  /// - Complexity: O(*s* + *k* log *n*) for *s* sections and *k* touched items.
  @inlinable
  func placingChildBatch(_ changeset: Changeset<Section>, atSectionOffset offset: Int) throws(Error) -> (
    Snapshot, Changeset<Section>
  )? {
    let sectionChanges = changeset.sectionChanges
    guard !sectionChanges.hasStructuralChanges else { return nil }
    let child = changeset.target
    var tree = self.tree
    for update in sectionChanges.updates {
      tree.replaceSectionContent(at: offset + update.to, with: child.sectionContent(at: update.to))
    }
    let changes = changeset.itemChanges
    let structural = changes.structuralIDs
    var touched = structural
    for update in changes.updates {
      touched.insert(update.id)
      guard !structural.contains(update.id), let position = tree.position(ofItem: update.id) else { continue }
      tree.replaceItem(at: position, with: child[update.to])
    }
    let childSections = offset..<(offset + changeset.source.sectionCount)
    var removed: [ItemPosition] = []
    for id in structural {
      if let position = tree.position(ofItem: id), childSections.contains(position.section) {
        removed.append(position)
      }
    }
    removed.sort { ($0.section, $0.item) > ($1.section, $1.item) }
    for position in removed { tree.removeItem(at: position) }
    var placed: [(item: Item, position: ItemPosition)] = []
    for id in structural {
      if let position = child.position(ofItem: id) { placed.append((child[position], position)) }
    }
    placed.sort { ($0.position.section, $0.position.item) < ($1.position.section, $1.position.item) }
    for (item, position) in placed {
      let at = ItemPosition(section: offset + position.section, item: position.item)
      if let elsewhere = tree.position(ofItem: item.id) {
        throw .duplicateItem(item.id, first: elsewhere, second: at)
      }
      tree.insertItem(item, at: at)
    }
    let next = Snapshot(tree: tree)
    // A batch of one stage (edits only, or inserts and deletes that move nothing) is the child's own,
    // shifted: nothing to derive.
    if changeset.stages.count == 1 {
      return (next, changeset.embeddingSingleStage(in: self, target: next, offset: offset))
    }
    let refreshing = changeset.forcedRefreshes.filter { child.contains(item: $0) }
    let change =
      Changeset(from: self, to: next, logged: touched, refreshing: refreshing)
      ?? Changeset(from: self, to: next, touching: touched, refreshing: refreshing)
    return (next, change)
  }
}

/// ``Snapshot/placingChildBatch(_:atSectionOffset:)``, the path of a child's batch and the hub's loops as
/// function values made where the client's build specialises them (see `Differ`): the composite's actor
/// is generic code that the client does not inline.
@usableFromInline
struct CompositePlacing<Section: SectionType>: Sendable {
  @usableFromInline let place:
    @Sendable (Snapshot<Section>, Changeset<Section>, Int) throws(Snapshot<Section>.Error) -> (
      Snapshot<Section>, Changeset<Section>
    )?
  /// ``CompositeEngine/receive(_:from:in:)``.
  @usableFromInline let receive:
    @Sendable (isolated CompositeEngine<Section>, UpdateBatch<Section>, ObjectIdentifier) -> Void
  /// The loops of the composite's hub over its subscribers (``HubLoops``).
  @usableFromInline let loops: HubLoops<Section>

  @inlinable
  init() {
    place = { (composite, changeset, offset) throws(Snapshot<Section>.Error) in
      try composite.placingChildBatch(changeset, atSectionOffset: offset)
    }
    receive = { engine, batch, key in CompositeEngine.receive(batch, from: key, in: engine) }
    loops = HubLoops()
  }
}
