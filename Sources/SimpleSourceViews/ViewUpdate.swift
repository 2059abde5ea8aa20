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

  /// Every batch with `reloadData()`.
  public static var unanimated: ViewUpdate { ViewUpdate(kind: .unanimated, largeBatchThreshold: nil) }

  /// The user's closure applies each batch through the ``Context``; it must apply it exactly once, by
  /// ``Context/performStages(refreshing:animated:)`` or ``Context/reloadData()``.
  public static func custom(
    largeBatchThreshold: Int? = nil, _ body: @escaping @MainActor @Sendable (Context) -> Void
  ) -> ViewUpdate {
    ViewUpdate(kind: .custom(body), largeBatchThreshold: largeBatchThreshold)
  }
}
