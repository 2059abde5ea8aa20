// A batch applied to sections the caller keeps: a cache, rows of its own, a model outside any view.

extension UpdateBatch {
  /// Applies the batch to `sections`, your own copy of the state at ``from``: afterwards they equal the
  /// sections of ``snapshot``.
  ///
  /// Every change is checked against what `sections` hold before anything is made (a position past
  /// them, an id where the batch expects another, an id placed twice), with the algorithm a remote source
  /// applies the wire's batches with. Keep the sections of the subscription's snapshot and apply each
  /// batch in order:
  ///
  /// ```swift
  /// let subscription = await source.subscribe()
  /// var cache = subscription.snapshot.sections
  /// for await batch in subscription.batches {
  ///   try batch.apply(to: &cache)  // cache == batch.snapshot.sections
  /// }
  /// ```
  ///
  /// - Parameter sections: The state at ``from``; the state at ``to`` when the call returns.
  /// - Throws: ``DataSourceError``, and `sections` are left as they were:
  ///   ``DataSourceErrorCode/duplicateSectionID`` or ``DataSourceErrorCode/duplicateItemID`` when they
  ///   hold an id twice; ``DataSourceErrorCode/batchDoesNotApply`` when they are not the state at
  ///   ``from`` (its ``DataSourceError/detail`` names the stage, the change, the position and what was
  ///   found there).
  /// - Complexity: O(*n*) for *n* items in `sections` (they are read into a snapshot and written back),
  ///   plus O(*k* log *n*) for *k* changes. A consumer that keeps a ``Snapshot`` needs no copy: it takes
  ///   ``snapshot``.
  public func apply(to sections: inout [Section]) throws(DataSourceError<Section.ID, Section.Item.ID>) {
    let held = try Snapshot(sections)
    do {
      sections = try held.applyingChecked(changeset.stages.map { StagePatch($0) }).snapshot.sections
    } catch {
      throw DataSourceError(
        code: .batchDoesNotApply, detail: "batch \(from)→\(to), stage \(error.stage): \(error.detail)")
    }
  }
}
