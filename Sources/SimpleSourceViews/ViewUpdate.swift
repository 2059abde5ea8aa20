// How a view data source applies a batch to its view: animated, unanimated, or the user's own way.

public import SimpleSourceCore

/// How a ``ListViewDataSource`` applies each batch to its view.
///
/// Whatever the policy, the view falls back to `reloadData()` when it is off screen, and when a batch has
/// more changes than ``largeBatchThreshold``.
public struct ViewUpdate<Section: SectionType>: Sendable {
  /// What a custom policy receives: the view, the batch, and the ways to apply it.
  @MainActor
  public struct Context {
    /// The view to update.
    public let view: any ListView
    /// The batch to apply.
    public let batch: UpdateBatch<Section>
    /// Applies the stages: animated with the given animations, or unanimated for `nil`.
    let applyStages: @MainActor (RefreshStyle, ChangeAnimations?, StagePerformer?) -> Void
    let reload: @MainActor () -> Void

    /// Performs one stage with the view's own API: call UIKit with `update`, and call `updateData` first
    /// thing inside the update block (S5).
    public typealias StagePerformer =
      @MainActor (_ update: StageCalls, _ updateData: @escaping @MainActor () -> Void) -> Void

    /// Applies the batch stage by stage through ``ListView/performBatchUpdates(_:animated:updateData:)``,
    /// as the animated policy does.
    public func performStages(refreshing style: RefreshStyle = .reconfigure, animated: Bool = true) {
      applyStages(style, animated ? .automatic : nil, nil)
    }

    /// Applies the batch stage by stage, animated with `animations` for each kind of change.
    public func performStages(refreshing style: RefreshStyle = .reconfigure, animations: ChangeAnimations) {
      applyStages(style, animations, nil)
    }

    /// Applies the batch stage by stage, each through `perform`: for a row animation of your choice, a
    /// completion handler, or any call the view offers. The stages' calls are computed as for the
    /// animated policy, reconfigures that change a cell's class already turned into reloads.
    public func performStages(refreshing style: RefreshStyle = .reconfigure, with perform: StagePerformer) {
      withoutActuallyEscaping(perform) { perform in applyStages(style, .automatic, perform) }
    }

    /// Shows the batch's snapshot with `reloadData()`.
    public func reloadData() { reload() }
  }

  enum Kind: Sendable {
    case animated(RefreshStyle, ChangeAnimations)
    case unanimated
    case custom(@MainActor @Sendable (Context) -> Void)
  }

  let kind: Kind
  /// Batches with more changes than this are shown with `reloadData()`; `nil` for no limit.
  public var largeBatchThreshold: Int?
  /// Told each batch that breaks UIKit's rules, when batches are verified (``verifyingBatches(_:)``).
  var verification: (@MainActor @Sendable (InvalidBatch<Section>) -> Void)?

  /// This policy, with every batch checked against UIKit's batch-update rules before the view sees it:
  /// a batch whose stages UIKit would reject (or would apply to the wrong cells) is not performed but
  /// given to `report`, naming the rule, the batch and the source that made it, and the view is
  /// reloaded with the batch's snapshot instead, so the app shows the source's state and does not crash.
  ///
  /// Meant for debug builds, where it turns a source's bug (a `DataSourceType` of your own that emits a
  /// batch its subscribers cannot apply) into a report at the first such batch instead of an
  /// `NSInternalInconsistencyException` on a device:
  ///
  /// ```swift
  /// #if DEBUG
  /// dataSource.update = .animated().verifyingBatches { assertionFailure("\($0)") }
  /// #endif
  /// ```
  ///
  /// The rules are those ``ReferenceListView`` applies (the package's tests check it against an
  /// independent model of them); the batches the package's own sources make always pass.
  /// - Complexity: Off, nothing. On, each batch performed as stages runs the rules over a copy of what
  ///   the view shows: O(*n*) for *n* shown items, plus O(*k*) per stage for its *k* calls (the
  ///   benchmark's `view-apply-verified` gives the ratio to an unverified batch).
  public func verifyingBatches(_ report: @escaping @MainActor @Sendable (InvalidBatch<Section>) -> Void)
    -> ViewUpdate
  {
    var verified = self
    verified.verification = report
    return verified
  }

  /// Each stage as one animated batch; changed items are reconfigured (or reloaded).
  /// - Parameters:
  ///   - style: How changed items are refreshed.
  ///   - animations: The animation of each kind of change (on views that take one per change).
  ///   - largeBatchThreshold: Batches with more changes are shown with `reloadData()`.
  public static func animated(
    refreshing style: RefreshStyle = .reconfigure, animations: ChangeAnimations = .automatic,
    largeBatchThreshold: Int? = 500
  ) -> ViewUpdate {
    ViewUpdate(kind: .animated(style, animations), largeBatchThreshold: largeBatchThreshold)
  }

  /// Every batch with `reloadData()` (nothing for ``verifyingBatches(_:)`` to check).
  public static var unanimated: ViewUpdate { ViewUpdate(kind: .unanimated, largeBatchThreshold: nil) }

  /// The user's closure applies each batch through the ``Context``; it must apply it exactly once, by
  /// ``Context/performStages(refreshing:animated:)`` or ``Context/reloadData()``.
  public static func custom(
    largeBatchThreshold: Int? = nil, _ body: @escaping @MainActor @Sendable (Context) -> Void
  ) -> ViewUpdate {
    ViewUpdate(kind: .custom(body), largeBatchThreshold: largeBatchThreshold)
  }
}

/// A batch a ``ListViewDataSource`` did not perform because it breaks UIKit's batch-update rules
/// (``ViewUpdate/verifyingBatches(_:)``): the view was reloaded with the batch's snapshot instead.
public struct InvalidBatch<Section: SectionType>: Error, CustomStringConvertible {
  /// The rule the batch breaks and what was wrong, as ``ReferenceListView`` reports it.
  public let error: ListViewError
  /// The batch.
  public let batch: UpdateBatch<Section>
  /// The index of its first stage that breaks the rule.
  public let stage: Int
  /// The source that made it: its type, as the data source was told to follow it.
  public let source: String

  /// `Tasks made batch 3 → 4, stage 1: R9: …`.
  public var description: String {
    "\(source) made batch \(batch.from) → \(batch.to), stage \(stage): \(error)"
  }
}
