// What TableViewDataSource and CollectionViewDataSource share: a ListViewDataSource that follows a source.

#if canImport(UIKit) && !os(watchOS) && !os(tvOS)
  public import SimpleSourceCore
  public import SimpleSourceViews
  public import UIKit

  /// The common base of ``TableViewDataSource`` and ``CollectionViewDataSource``: it owns the platform-free
  /// ``viewDataSource`` and the task that makes it follow the data source.
  ///
  /// **Delegate methods and fallbacks.** Set the adapter as the view's `delegate` too. For each delegate
  /// method that an interaction closure handles (``ListViewDataSource/interactions``: selection, display,
  /// heights, editing, swipe actions, accessory taps) it answers from the closures; every other method,
  /// including those of interactions without any closure and all `UIScrollViewDelegate` methods, goes to the
  /// subclass's `fallbackDelegate`, and data source methods it does not implement go to
  /// `fallbackDataSource`, by `responds(to:)` and `forwardingTarget(for:)`.
  ///
  /// UIKit asks its delegate and data source which methods they answer when they are assigned, and caches
  /// the answers. So whenever a closure or a fallback set later changes those answers, the adapter assigns
  /// itself to the view again (where it is the view's delegate or data source) to make UIKit ask anew: the
  /// order in which you register closures, set fallbacks and assign the view's `delegate` does not matter.
  /// A method a closure answered whose closure is removed is still answered, with UIKit's default.
  ///
  /// A fallback is held weakly, as UIKit holds delegates. When it is deallocated while still set, the adapter
  /// learns it (an object attached to the fallback is released with it) and makes the view ask again, so
  /// that UIKit never sends a method the fallback answered to an object that is gone.
  @MainActor
  open class ViewDataSourceAdapter<Section: SectionType, View: ListView>: NSObject {
    // Guard map: every field is the main actor's (`following`, `answered`, `watchers`), but the three
    // marked `nonisolated(unsafe)`, each with why it cannot race; a fallback watcher's `isDetached` is a
    // lock of its own (its deinit may run off the main actor). `following` runs on the main actor; the
    // one other task (releasing a fallback) hops to it.

    /// The platform-free data source that holds the view's copy of the data and applies every batch.
    public let viewDataSource: ListViewDataSource<Section, View>
    private var following: Task<Void, Never>?
    /// Answers the delegate methods that closures handle.
    // Safe: a constant set in `init`, so reading the reference from `forwardingTarget(for:)` (nonisolated,
    // as NSObject declares it) cannot race; the object itself is only messaged by UIKit, on the main thread.
    private nonisolated(unsafe) let interactionResponder: NSObject?
    // Safe: written only on the main actor (the subclasses' main-actor `fallbackDelegate` and
    // `fallbackDataSource` setters), and read only by `route(_:)` after it asserted that it runs on the
    // main actor (`MainActor.assumeIsolated` stops the process otherwise), and by `forwardingTarget(for:)`
    // right after `route(_:)` on the same thread. UIKit sends its data source and delegate these messages
    // on the main thread.
    nonisolated(unsafe) weak var fallbackDelegateObject: AnyObject?
    // Safe: as `fallbackDelegateObject`.
    nonisolated(unsafe) weak var fallbackDataSourceObject: AnyObject?

    /// Creates the view's data source and starts following `dataSource`. The view is attached when it
    /// first asks a question, after you set it as the view's `dataSource`.
    /// - Parameters:
    ///   - dataSource: Where the items come from.
    ///   - viewFactory: Makes the cells, headers and footers (`TableViewFactory`, `CollectionViewFactory`).
    ///   - viewUpdate: How batches reach the view: `view.defaultViewUpdate()`, `view.unanimatedViewUpdate()`
    ///     or your own ``ViewUpdate/custom(largeBatchThreshold:_:)``.
    /// - Complexity: O(1); following `dataSource` starts in a task (its first snapshot is shown with
    ///   `reloadData()`, O(*n*) for UIKit's questions about visible rows only).
    public init(
      dataSource: some DataSourceType<Section>, viewFactory: ViewFactory<Section, View>,
      viewUpdate: ViewUpdate<Section> = .animated()
    ) {
      let viewDataSource = ListViewDataSource(factory: viewFactory, update: viewUpdate)
      self.viewDataSource = viewDataSource
      interactionResponder = Self.makeInteractionResponder(for: viewDataSource)
      super.init()
      answered = viewDataSource.interactions.answeredSelectors(in: Self.interactionKind)
      viewDataSource.interactions.onChange = { [weak self] in self?.answersMayHaveChanged(fallbacks: false) }
      following = Task.schedulable("following a source") { await viewDataSource.follow(dataSource) }
    }

    /// The methods the closures answered when UIKit last asked.
    private var answered: Set<String> = []

    /// Which fallback a watcher watches.
    enum FallbackRole: Int {
      case delegate, dataSource
    }

    /// Attached to a fallback (an associated object), and so released when the fallback is deallocated:
    /// it then tells the adapter, unless the adapter let go of that fallback before.
    private final class FallbackWatcher: Sendable {
      let released: @Sendable () -> Void
      let isDetached = Locked(false)

      init(released: @escaping @Sendable () -> Void) { self.released = released }

      deinit { if !isDetached.withLock({ $0 }) { released() } }
    }

    /// The watcher attached to each fallback now set, and the fallback (both weakly).
    private var watchers: [FallbackRole: (watcher: Weak<FallbackWatcher>, fallback: Weak<AnyObject>)] = [:]

    /// A weak reference.
    private struct Weak<Object: AnyObject> {
      weak var object: Object?
    }

    /// A weak reference to an adapter that a watcher's `@Sendable` closure may hold: main-actor
    /// isolated, so Sendable (the adapter, an `NSObject` subclass, is not).
    @MainActor private final class AdapterReference {
      weak var object: ViewDataSourceAdapter?
      init(_ object: ViewDataSourceAdapter) { self.object = object }
    }

    /// Sets the fallback of `role`, watches it, and makes the view ask again which methods this object
    /// answers. The subclasses' `fallbackDelegate` and `fallbackDataSource` setters call it.
    func setFallback(_ fallback: AnyObject?, as role: FallbackRole) {
      switch role {
      case .delegate: fallbackDelegateObject = fallback
      case .dataSource: fallbackDataSourceObject = fallback
      }
      watch(fallback, as: role)
      answersMayHaveChanged(fallbacks: true)
    }

    /// Detaches the watcher of the previous fallback of `role`, and attaches one to `fallback`.
    private func watch(_ fallback: AnyObject?, as role: FallbackRole) {
      // A key per adapter and role: two adapters sharing a fallback each watch it.
      let key = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()).advanced(by: role.rawValue)
      if let previous = watchers.removeValue(forKey: role) {
        previous.watcher.object?.isDetached.withLock { $0 = true }
        if let object = previous.fallback.object {
          objc_setAssociatedObject(object, key, nil, .OBJC_ASSOCIATION_RETAIN_NONATOMIC)
        }
      }
      guard let fallback else { return }
      let adapter = AdapterReference(self)
      let watcher = FallbackWatcher {
        // Fallbacks are UIKit delegates, released on the main thread; the hop covers any other.
        if Thread.isMainThread {
          MainActor.assumeIsolated { adapter.object?.fallbackReleased(as: role) }
        } else {
          Task.schedulable("releasing a fallback") { @MainActor in
            adapter.object?.fallbackReleased(as: role)
          }
        }
      }
      objc_setAssociatedObject(fallback, key, watcher, .OBJC_ASSOCIATION_RETAIN_NONATOMIC)
      watchers[role] = (Weak(object: watcher), Weak(object: fallback))
    }

    /// The fallback of `role` was deallocated: its weak reference already reads `nil`, so asking UIKit to
    /// ask again removes the methods it answered.
    private func fallbackReleased(as role: FallbackRole) {
      watchers[role] = nil
      answersMayHaveChanged(fallbacks: true)
    }

    /// Makes the view ask again which methods this object answers, if that changed: UIKit caches it when
    /// its `delegate` and `dataSource` are assigned. The subclasses call it from the fallbacks' setters.
    func answersMayHaveChanged(fallbacks: Bool) {
      let now = viewDataSource.interactions.answeredSelectors(in: Self.interactionKind)
      guard fallbacks || now != answered else { return }
      answered = now
      if let view = viewDataSource.view { Self.reassign(self, to: view) }
    }

    /// Assigns `adapter` again as the view's delegate and data source, where it is them; the subclasses
    /// know the view's properties.
    class func reassign(_ adapter: ViewDataSourceAdapter, to view: View) {}

    // A plain deinit, not `isolated deinit`: the latter crashes the compiler in optimised builds of a
    // generic @MainActor class for deployment targets below iOS 18.4 (swiftlang/swift #85308, #89896,
    // #90625), and would reject a subclass's own plain deinit. Reading a Sendable `Task` and cancelling it
    // needs no isolation.
    deinit { following?.cancel() }

    /// The object that answers the delegate methods interaction closures handle; subclasses make theirs.
    class func makeInteractionResponder(for viewDataSource: ListViewDataSource<Section, View>) -> NSObject? {
      nil
    }

    /// The kind of view, for the names of its delegate methods.
    nonisolated class var interactionKind: ListInteractions<Section>.ViewKind { .table }

    private enum Route: Sendable {
      case responder, fallbackDelegate, fallbackDataSource
    }

    /// Who answers `selector`, when this object does not implement it: the closures, a fallback, or nobody.
    private nonisolated func route(_ selector: Selector) -> Route? {
      let name = NSStringFromSelector(selector)
      let viewDataSource = viewDataSource
      let kind = Self.interactionKind
      let answered = MainActor.assumeIsolated {
        viewDataSource.interactions.answers(selectorNamed: name, in: kind) == true
      }
      if answered { return .responder }
      if (fallbackDelegateObject as? any NSObjectProtocol)?.responds(to: selector) == true {
        return .fallbackDelegate
      }
      if (fallbackDataSourceObject as? any NSObjectProtocol)?.responds(to: selector) == true {
        return .fallbackDataSource
      }
      return nil
    }

    /// Whether this object answers `aSelector`: its own methods, the closures' methods, and the fallbacks'.
    /// - Complexity: O(*r*) in the number of reuse identifiers with closures.
    open override func responds(to aSelector: Selector!) -> Bool {
      super.responds(to: aSelector) || route(aSelector) != nil
    }

    /// Where a method this object does not implement goes: the closures' responder or a fallback. A method
    /// that UIKit was told is answered keeps being answered: when its closure is gone, the responder gives
    /// UIKit's default.
    /// - Complexity: O(*r*) in the number of reuse identifiers with closures.
    open override func forwardingTarget(for aSelector: Selector!) -> Any? {
      switch route(aSelector) {
      case .responder: interactionResponder
      case .fallbackDelegate: fallbackDelegateObject
      case .fallbackDataSource: fallbackDataSourceObject
      case nil:
        if let responder = interactionResponder, responder.responds(to: aSelector) {
          responder
        } else {
          super.forwardingTarget(for: aSelector)
        }
      }
    }

    /// Applies the moves the user makes; `nil` (the default) disables reordering.
    public var reorderingDelegate: (any ReorderingDelegate<Section>)? {
      get { viewDataSource.reorderingDelegate }
      set { viewDataSource.reorderingDelegate = newValue }
    }
  }
#endif
