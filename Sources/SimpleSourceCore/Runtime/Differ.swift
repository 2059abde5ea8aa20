// The O(n) functions of publishing, captured as values where clients' builds specialise them.

/// Indexing and diffing for one section type, as function values made in an `@inlinable` initialiser.
///
/// Swift does not specialise the methods of a generic actor or class for the client's types; code they
/// call directly runs unspecialised, through witness tables, several times slower for large batches.
/// A `BasicDataSource` therefore makes its `Differ` in its `@inlinable` initialiser, where the client's
/// build specialises these closures, and its publish loop and its subscribers' catch-up diffs call them.
@usableFromInline
package struct Differ<Section: SectionType>: Sendable {
  /// Indexes sections already known to be valid.
  @usableFromInline package let index: @Sendable ([Section]) -> Snapshot<Section>
  /// ``Changeset/init(from:to:refreshing:)``.
  @usableFromInline package let diff:
    @Sendable (Snapshot<Section>, Snapshot<Section>, Set<Section.Item.ID>) -> Changeset<Section>

  /// ``Changeset/init(from:to:logged:refreshing:)``: the batch derived from the ids the log touched.
  @usableFromInline package let logged:
    @Sendable (Snapshot<Section>, Snapshot<Section>, Set<Section.Item.ID>, Set<Section.Item.ID>) -> Changeset<
      Section
    >?

  /// ``UpdateBatch/init(from:to:changeset:)``, which collects the ids the batch touched.
  @usableFromInline package let batch:
    @Sendable (Int, Int, VersionCounter, Changeset<Section>) -> UpdateBatch<Section>

  /// ``SectionStore/replacing(_:with:)``: validates new sections and compares them with the current ones.
  @usableFromInline let replace:
    @Sendable (Snapshot<Section>, [Section]) throws(DataSourceError<Section.ID, Section.Item.ID>) ->
      SectionStore<
        Section
      >?

  /// ``Changeset/historyEdits``: what a retained history keeps of a change.
  @usableFromInline package let historyEdits: @Sendable (Changeset<Section>) -> [BatchEdit<Section>]?

  /// ``Snapshot/applying(_:)-(BatchEdit)``: how a retained history rebuilds a version from its edits;
  /// `nil` when they do not apply.
  @usableFromInline let applyEdits: @Sendable (Snapshot<Section>, [BatchEdit<Section>]) -> Snapshot<Section>?

  /// The changes from `from` to `to`: derived from the ids `touched` when they are known and the sections
  /// kept their ids and order, the full diff otherwise. Every place that publishes a change decides so.
  /// - Complexity: O(*s* + *k* log *n*) from *k* touched ids over snapshots in their persistent form
  ///   (``Changeset/init(from:to:logged:refreshing:)``); O(*n*) for the full diff.
  @inlinable
  package func changes(
    from: Snapshot<Section>, to: Snapshot<Section>, touched: Set<Section.Item.ID>?,
    refreshing: Set<Section.Item.ID>
  ) -> Changeset<Section> {
    if let touched, let changeset = logged(from, to, touched, refreshing) { return changeset }
    return diff(from, to, refreshing)
  }

  @inlinable
  package init() {
    index = { Snapshot(trusted: $0) }
    diff = { Changeset(from: $0, to: $1, refreshing: $2) }
    logged = { Changeset(from: $0, to: $1, logged: $2, refreshing: $3) }
    batch = { UpdateBatch(from: $0, to: $1, of: $2, changeset: $3) }
    historyEdits = { $0.historyEdits }
    applyEdits = { try? $0.applying($1) }
    replace = { (current, sections) throws(DataSourceError<Section.ID, Section.Item.ID>) in
      try SectionStore.replacing(current, with: sections)
    }
  }
}
