// Which animation each kind of change gets: allaboutapps' per-change row animations, platform-free.

/// How a row or section appears or disappears; the cases of `UITableView.RowAnimation`.
public enum ListAnimation: Hashable, Sendable, CaseIterable {
  /// The view's own choice.
  case automatic
  /// Fades in or out.
  case fade
  /// Slides in from the right, or out to the right.
  case right
  /// Slides in from the left, or out to the left.
  case left
  /// Slides in from the top, or out to the top.
  case top
  /// Slides in from the bottom, or out to the bottom.
  case bottom
  /// Spreads from, or shrinks to, the middle.
  case middle
  /// No animation.
  case none
}

/// The animation of each kind of change in a batch, for ``ViewUpdate/animated(refreshing:animations:largeBatchThreshold:)``.
///
/// ```swift
/// let update = ViewUpdate<Department>.animated(
///   animations: ChangeAnimations(insertItems: .fade, deleteItems: .left, insertSections: .top))
/// ```
///
/// Moves always animate as moves and reconfigures never animate: UIKit takes no animation for them.
/// Table views honour each kind; collection views animate every change their own way.
public struct ChangeAnimations: Hashable, Sendable {
  /// Items inserted.
  public var insertItems: ListAnimation
  /// Items deleted.
  public var deleteItems: ListAnimation
  /// Items reloaded (``RefreshStyle/reload``).
  public var reloadItems: ListAnimation
  /// Sections inserted.
  public var insertSections: ListAnimation
  /// Sections deleted.
  public var deleteSections: ListAnimation
  /// Sections reloaded.
  public var reloadSections: ListAnimation

  /// `all` for every kind of change.
  public init(_ all: ListAnimation) {
    self.init(
      insertItems: all, deleteItems: all, reloadItems: all, insertSections: all, deleteSections: all,
      reloadSections: all)
  }

  /// An animation for each kind of change; the view's own for those not given.
  public init(
    insertItems: ListAnimation = .automatic, deleteItems: ListAnimation = .automatic,
    reloadItems: ListAnimation = .automatic, insertSections: ListAnimation = .automatic,
    deleteSections: ListAnimation = .automatic, reloadSections: ListAnimation = .automatic
  ) {
    self.insertItems = insertItems
    self.deleteItems = deleteItems
    self.reloadItems = reloadItems
    self.insertSections = insertSections
    self.deleteSections = deleteSections
    self.reloadSections = reloadSections
  }

  /// The view's own animation for everything.
  public static let automatic = ChangeAnimations()
}
