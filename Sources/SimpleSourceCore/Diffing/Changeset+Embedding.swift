// A change of a run of sections, placed in a larger list: every position shifted, every stage's data
// surrounded by the sections around the run (how a composite shows a child's batch).

extension Changeset {
  /// This change, made to a snapshot whose sections `offset..<offset + source.sections.count` are
  /// ``source``'s, between `prefix` and `suffix`: every position shifted by `offset` sections, every stage's
  /// data surrounded by the other sections.
  ///
  /// - Complexity: O(*c* + *s* · *t*) for *c* changes, *s* stages and *t* sections in all; no hashing.
  @inlinable
  func embedded(
    in source: Snapshot<Section>, target: Snapshot<Section>, offset: Int, prefix: ArraySlice<Section>,
    suffix: ArraySlice<Section>
  ) -> Changeset {
    shifted(in: source, target: target, offset: offset) { stage in
      Snapshot(trustedLazily: Array(prefix) + stage.state.sections + Array(suffix))
    }
  }

  /// This change of one stage, made to a snapshot whose sections `offset..<offset + source.sections.count`
  /// are ``source``'s, into `target`: every position shifted by `offset` sections, and the stage's state
  /// `target` itself. The sections around the run are not visited.
  ///
  /// - Complexity: O(*c*) for *c* changes.
  @inlinable
  func embeddingSingleStage(in source: Snapshot<Section>, target: Snapshot<Section>, offset: Int) -> Changeset
  {
    precondition(stages.count == 1, "SimpleSource internal inconsistency: a changeset of several stages")
    return shifted(in: source, target: target, offset: offset) { _ in target }
  }

  /// This change with every position shifted by `offset` sections, each stage's state made by `state`.
  @inlinable
  func shifted(
    in source: Snapshot<Section>, target: Snapshot<Section>, offset: Int,
    state: (ChangeStage<Section>) -> Snapshot<Section>
  ) -> Changeset {
    func shift(_ list: ChangeList<Section.ID, Int>) -> ChangeList<Section.ID, Int> {
      list.mapPositions { $0 + offset }
    }
    func shift(_ list: ChangeList<Item.ID, ItemPosition>) -> ChangeList<Item.ID, ItemPosition> {
      list.mapPositions { ItemPosition(section: $0.section + offset, item: $0.item) }
    }
    let stages = self.stages.map { stage in
      ChangeStage(
        kind: stage.kind, sectionChanges: shift(stage.sectionChanges), itemChanges: shift(stage.itemChanges),
        state: state(stage))
    }
    return Changeset(
      source: source, target: target, stages: stages, sectionChanges: shift(sectionChanges),
      itemChanges: shift(itemChanges),
      // Only this run's own items: an id it refreshed and no longer has may be another run's item now.
      forcedRefreshes: forcedRefreshes.filter { self.target.contains(item: $0) })
  }
}
