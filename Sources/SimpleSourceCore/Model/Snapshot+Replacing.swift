// Replacing a run of sections of a snapshot, re-indexing only the sections whose items moved.

extension Snapshot {
  /// The snapshot with the sections in `range` replaced by `replacement`, which has the same section ids
  /// in the same order; only the items of the sections at `reindexed` (indices into `replacement`) may
  /// have changed position, been inserted or been deleted. The id index is copied and patched for those
  /// sections; when the section ids differ it is rebuilt.
  ///
  /// - Throws: ``DataSourceError`` for an item id that is already elsewhere in the snapshot.
  /// - Complexity: O(*n*) to copy the index without hashing, plus one hash per item of the re-indexed
  ///   sections; O(*n*) hashes when the section ids differ.
  @inlinable
  func replacingSections(_ range: Range<Int>, with replacement: [Section], reindexed: Set<Int>) throws(Error)
    -> Snapshot
  {
    var sections = self.sections
    sections.replaceSubrange(range, with: replacement)
    let sameShape =
      replacement.count == range.count
      && zip(self.sections[range], replacement).allSatisfy { $0.id == $1.id }
    guard sameShape else { return try Snapshot(sections) }
    var positions = positionByItemID
    for relative in reindexed.sorted() {
      for item in self.sections[range.lowerBound + relative].items { positions.removeValue(forKey: item.id) }
    }
    for relative in reindexed.sorted() {
      let sectionIndex = range.lowerBound + relative
      let items = replacement[relative].items
      for itemIndex in items.indices {
        let packed = PackedPosition(section: sectionIndex, item: itemIndex)
        if let first = positions.updateValue(packed, forKey: items[itemIndex].id) {
          throw .duplicateItem(
            items[itemIndex].id, first: first.position,
            second: ItemPosition(section: sectionIndex, item: itemIndex))
        }
      }
    }
    var offsets = itemOffsets
    for index in range.lowerBound..<sections.count {
      offsets[index + 1] = offsets[index] + sections[index].items.count
    }
    return Snapshot(
      flat: FlatSnapshot(
        sections: sections, sectionIndexByID: sectionIndexByID, positionByItemID: positions,
        itemOffsets: offsets))
  }
}
