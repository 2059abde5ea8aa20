// A type-checking stand-in for the parts of UIKit the skin uses (Linux has no UIKit); see .ci/skins-typecheck.
// Signatures follow Apple's documentation. It proves the skin is well-typed Swift 6, not that UIKit agrees.
// What it cannot check: availability (Linux has none: .ci/availability-lint stands in for the floors, Clock
// and parameterized existentials), which platforms lack a class (tvOS has no UISwitch, UISlider or swipe
// actions, hence the skin's `!os(tvOS)`), Objective-C itself (@objc inference, and UIKit's caching of which
// methods a delegate or data source answers when it is assigned, and associated objects: the stand-in's
// `objc_setAssociatedObject` stores nothing, so that a watcher is released with its object is not checked),
// and the optimiser (`-typecheck` only).
@_exported import Foundation

// The Objective-C runtime surface the skin uses. Linux's Foundation has no selectors, so the stand-in
// declares them, and an NSObject that shadows Foundation's with the SDK's two forwarding methods.
public struct Selector: Hashable, Sendable, ExpressibleByStringLiteral {
  let name: String
  public init(_ name: String) { self.name = name }
  public init(stringLiteral name: String) { self.name = name }
}
public func NSStringFromSelector(_ aSelector: Selector) -> String { aSelector.name }
public protocol NSObjectProtocol: AnyObject {
  func responds(to aSelector: Selector!) -> Bool
}
open class NSObject: Foundation.NSObject, NSObjectProtocol {
  open func responds(to aSelector: Selector!) -> Bool { false }
  open func forwardingTarget(for aSelector: Selector!) -> Any? { nil }
}
/// The SDK's `objc_AssociationPolicy` (ObjectiveC, re-exported by UIKit), with its raw values.
public enum objc_AssociationPolicy: UInt, Sendable {
  case OBJC_ASSOCIATION_ASSIGN = 0
  case OBJC_ASSOCIATION_RETAIN_NONATOMIC = 1
  case OBJC_ASSOCIATION_COPY_NONATOMIC = 3
  case OBJC_ASSOCIATION_RETAIN = 769
  case OBJC_ASSOCIATION_COPY = 771
}
/// The SDK's signature; stores nothing here.
public func objc_setAssociatedObject(
  _ object: Any, _ key: UnsafeRawPointer, _ value: Any?, _ policy: objc_AssociationPolicy
) {}

@MainActor open class UIResponder: NSObject {}
@MainActor open class UIImage: NSObject {
  public convenience init?(systemName name: String) { self.init() }
}

@MainActor open class UIView: UIResponder {
  public override init() {}
  public required init?(coder: NSCoder) {}
  public init(frame: CGRect) {}
  open var frame = CGRect.zero
  open var bounds = CGRect.zero
  open var center = CGPoint.zero
  open func addSubview(_ view: UIView) {}
  open func layoutSubviews() {}
  open var window: UIWindow? { nil }
  public static func performWithoutAnimation(_ actions: () -> Void) { actions() }
  open func setNeedsLayout() {}
}
@MainActor open class UIWindow: UIView {}
@MainActor open class UILabel: UIView { open var text: String? }
@MainActor open class UIAction: NSObject {
  public convenience init(handler: @escaping UIActionHandler) { self.init() }
}
public typealias UIActionHandler = (UIAction) -> Void
@MainActor open class UIControl: UIView {
  public struct Event: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let touchUpInside = Event(rawValue: 1 << 6)
    public static let valueChanged = Event(rawValue: 1 << 12)
    public static let editingChanged = Event(rawValue: 1 << 17)
  }
  public struct State: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let normal = State([])
  }
  open func addAction(_ action: UIAction, for controlEvents: Event) {}
}
@MainActor open class UISwitch: UIControl { open var isOn = false }
@MainActor open class UISlider: UIControl {
  open var value: Float = 0
  open var minimumValue: Float = 0
  open var maximumValue: Float = 1
}
@MainActor open class UITextField: UIControl {
  open var text: String?
  open var placeholder: String?
}
@MainActor public protocol UITextViewDelegate: UIScrollViewDelegate {}
@MainActor public protocol UITextViewDelegateOptionals: UITextViewDelegate {
  func textViewDidChange(_ textView: UITextView)
}
@MainActor open class UITextView: UIView {
  open var text: String!
  open weak var delegate: (any UITextViewDelegate)?
}
@MainActor open class UIButton: UIControl {
  public enum ButtonType: Int, Sendable { case custom, system }
  public convenience init(type buttonType: ButtonType) { self.init() }
  open func setTitle(_ title: String?, for state: UIControl.State) {}
}
@MainActor open class UIActivityIndicatorView: UIView {
  public enum Style: Int, Sendable { case medium = 100, large = 101 }
  public init(style: Style) { super.init() }
  public required init?(coder: NSCoder) { super.init(coder: coder) }
  open func startAnimating() {}
  open func stopAnimating() {}
}
@MainActor open class UINib: NSObject {}

// In the SDK the data source and delegate protocols are @objc, with optional requirements. Linux has no
// @objc optionals, so the protocols here hold only the SDK's required methods, and the optional ones the
// skin implements are plain requirements of the `…Optionals` protocols below. Witnesses.swift, compiled
// into the skin's module by .ci/skins-typecheck only, conforms each skin class to the ones it implements:
// a misspelt witness then fails the type-check instead of silently never being called on iOS.
@MainActor public protocol UITableViewDataSource: NSObjectProtocol {
  func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int
  func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell
}
@MainActor public protocol UITableViewDataSourceOptionals: UITableViewDataSource {
  func numberOfSections(in tableView: UITableView) -> Int
  func tableView(_ tableView: UITableView, titleForHeaderInSection section: Int) -> String?
  func tableView(_ tableView: UITableView, titleForFooterInSection section: Int) -> String?
  func tableView(_ tableView: UITableView, canMoveRowAt indexPath: IndexPath) -> Bool
  func tableView(_ tableView: UITableView, moveRowAt sourceIndexPath: IndexPath, to destinationIndexPath: IndexPath)
}
@MainActor public protocol UITableViewDataSourceEditingOptionals: UITableViewDataSource {
  func tableView(_ tableView: UITableView, canEditRowAt indexPath: IndexPath) -> Bool
  func tableView(
    _ tableView: UITableView, commit editingStyle: UITableViewCell.EditingStyle, forRowAt indexPath: IndexPath)
}
@MainActor public protocol UIScrollViewDelegate: NSObjectProtocol {}
@MainActor public protocol UITableViewDelegate: UIScrollViewDelegate {}
@MainActor public protocol UITableViewDelegateOptionals: UITableViewDelegate {
  func tableView(_ tableView: UITableView, didSelectRowAt indexPath: IndexPath)
  func tableView(_ tableView: UITableView, willDisplay cell: UITableViewCell, forRowAt indexPath: IndexPath)
  func tableView(_ tableView: UITableView, accessoryButtonTappedForRowWith indexPath: IndexPath)
  func tableView(_ tableView: UITableView, heightForRowAt indexPath: IndexPath) -> CGFloat
  func tableView(_ tableView: UITableView, estimatedHeightForRowAt indexPath: IndexPath) -> CGFloat
  func tableView(_ tableView: UITableView, heightForHeaderInSection section: Int) -> CGFloat
  func tableView(_ tableView: UITableView, heightForFooterInSection section: Int) -> CGFloat
  func tableView(_ tableView: UITableView, estimatedHeightForHeaderInSection section: Int) -> CGFloat
  func tableView(_ tableView: UITableView, estimatedHeightForFooterInSection section: Int) -> CGFloat
  func tableView(_ tableView: UITableView, editingStyleForRowAt indexPath: IndexPath)
    -> UITableViewCell.EditingStyle
  func tableView(_ tableView: UITableView, leadingSwipeActionsConfigurationForRowAt indexPath: IndexPath)
    -> UISwipeActionsConfiguration?
  func tableView(_ tableView: UITableView, trailingSwipeActionsConfigurationForRowAt indexPath: IndexPath)
    -> UISwipeActionsConfiguration?
}
@MainActor public protocol UICollectionViewDelegate: UIScrollViewDelegate {}
@MainActor public protocol UICollectionViewDelegateOptionals: UICollectionViewDelegate {
  func collectionView(_ collectionView: UICollectionView, didSelectItemAt indexPath: IndexPath)
  func collectionView(
    _ collectionView: UICollectionView, willDisplay cell: UICollectionViewCell, forItemAt indexPath: IndexPath)
}
@MainActor public protocol UICollectionViewDataSource: NSObjectProtocol {
  func collectionView(_ collectionView: UICollectionView, numberOfItemsInSection section: Int) -> Int
  func collectionView(_ collectionView: UICollectionView, cellForItemAt indexPath: IndexPath)
    -> UICollectionViewCell
}
@MainActor public protocol UICollectionViewDataSourceOptionals: UICollectionViewDataSource {
  func numberOfSections(in collectionView: UICollectionView) -> Int
  func collectionView(
    _ collectionView: UICollectionView, viewForSupplementaryElementOfKind kind: String, at indexPath: IndexPath
  ) -> UICollectionReusableView
  func collectionView(_ collectionView: UICollectionView, canMoveItemAt indexPath: IndexPath) -> Bool
  func collectionView(
    _ collectionView: UICollectionView, moveItemAt sourceIndexPath: IndexPath, to destinationIndexPath: IndexPath)
}

@MainActor open class UIContextualAction: NSObject {
  public enum Style: Int, Sendable { case normal, destructive }
  public typealias Handler = (UIContextualAction, UIView, @escaping (Bool) -> Void) -> Void
  public init(style: Style, title: String?, handler: @escaping Handler) {}
  open var image: UIImage?
}
@MainActor open class UISwipeActionsConfiguration: NSObject {
  public init(actions: [UIContextualAction]) {}
  open var performsFirstActionWithFullSwipe = true
}

@MainActor open class UITableViewCell: UIView {
  public enum CellStyle: Int, Sendable { case `default`, value1, value2, subtitle }
  public enum EditingStyle: Int, Sendable { case none, delete, insert }
  public init(style: CellStyle, reuseIdentifier: String?) { super.init() }
  public required init?(coder: NSCoder) { super.init(coder: coder) }
  open var textLabel: UILabel? { nil }
  open var detailTextLabel: UILabel? { nil }
  open var contentView: UIView { UIView() }
  open var accessoryView: UIView?
}
@MainActor open class UITableViewHeaderFooterView: UIView { open var textLabel: UILabel? { nil } }

@MainActor open class UITableView: UIView {
  public enum RowAnimation: Int, Sendable {
    case fade, right, left, top, bottom, none, middle
    case automatic = 100
  }
  open weak var dataSource: (any UITableViewDataSource)?
  open weak var delegate: (any UITableViewDelegate)?
  public static let automaticDimension: CGFloat = -1
  open func deselectRow(at indexPath: IndexPath, animated: Bool) {}
  open func reloadData() {}
  open func performBatchUpdates(_ updates: (() -> Void)?, completion: ((Bool) -> Void)? = nil) { updates?() }
  open func deleteSections(_ sections: IndexSet, with animation: RowAnimation) {}
  open func insertSections(_ sections: IndexSet, with animation: RowAnimation) {}
  open func reloadSections(_ sections: IndexSet, with animation: RowAnimation) {}
  open func moveSection(_ section: Int, toSection newSection: Int) {}
  open func deleteRows(at indexPaths: [IndexPath], with animation: RowAnimation) {}
  open func insertRows(at indexPaths: [IndexPath], with animation: RowAnimation) {}
  open func reloadRows(at indexPaths: [IndexPath], with animation: RowAnimation) {}
  open func moveRow(at indexPath: IndexPath, to newIndexPath: IndexPath) {}
  open func reconfigureRows(at indexPaths: [IndexPath]) {}
  open func register(_ cellClass: AnyClass?, forCellReuseIdentifier identifier: String) {}
  open func register(_ nib: UINib?, forCellReuseIdentifier identifier: String) {}
  open func register(_ aClass: AnyClass?, forHeaderFooterViewReuseIdentifier identifier: String) {}
  open func register(_ nib: UINib?, forHeaderFooterViewReuseIdentifier identifier: String) {}
  open func dequeueReusableCell(withIdentifier identifier: String) -> UITableViewCell? { nil }
  open func dequeueReusableCell(withIdentifier identifier: String, for indexPath: IndexPath)
    -> UITableViewCell
  { fatalError() }
  open func dequeueReusableHeaderFooterView(withIdentifier identifier: String) -> UITableViewHeaderFooterView?
  { nil }
  open func headerView(forSection section: Int) -> UITableViewHeaderFooterView? { nil }
  open func footerView(forSection section: Int) -> UITableViewHeaderFooterView? { nil }
}

@MainActor open class UICollectionReusableView: UIView {}
@MainActor open class UICollectionViewCell: UICollectionReusableView {
  open var contentView: UIView { UIView() }
}
@MainActor open class UICollectionView: UIView {
  open weak var dataSource: (any UICollectionViewDataSource)?
  open weak var delegate: (any UICollectionViewDelegate)?
  open func deselectItem(at indexPath: IndexPath, animated: Bool) {}
  open func reloadData() {}
  open func performBatchUpdates(_ updates: (() -> Void)?, completion: ((Bool) -> Void)? = nil) { updates?() }
  open func deleteSections(_ sections: IndexSet) {}
  open func insertSections(_ sections: IndexSet) {}
  open func reloadSections(_ sections: IndexSet) {}
  open func moveSection(_ section: Int, toSection newSection: Int) {}
  open func deleteItems(at indexPaths: [IndexPath]) {}
  open func insertItems(at indexPaths: [IndexPath]) {}
  open func reloadItems(at indexPaths: [IndexPath]) {}
  open func moveItem(at indexPath: IndexPath, to newIndexPath: IndexPath) {}
  open func reconfigureItems(at indexPaths: [IndexPath]) {}
  open func register(_ cellClass: AnyClass?, forCellWithReuseIdentifier identifier: String) {}
  open func register(_ nib: UINib?, forCellWithReuseIdentifier identifier: String) {}
  open func register(
    _ viewClass: AnyClass?, forSupplementaryViewOfKind elementKind: String,
    withReuseIdentifier identifier: String
  ) {}
  open func register(
    _ nib: UINib?, forSupplementaryViewOfKind kind: String, withReuseIdentifier identifier: String
  ) {}
  open func dequeueReusableCell(withReuseIdentifier identifier: String, for indexPath: IndexPath)
    -> UICollectionViewCell
  { fatalError() }
  open func dequeueReusableSupplementaryView(
    ofKind elementKind: String, withReuseIdentifier identifier: String, for indexPath: IndexPath
  ) -> UICollectionReusableView { fatalError() }
  open func supplementaryView(forElementKind elementKind: String, at indexPath: IndexPath)
    -> UICollectionReusableView?
  { nil }
  open func beginInteractiveMovementForItem(at indexPath: IndexPath) -> Bool { true }
  open func endInteractiveMovement() {}
  open func cancelInteractiveMovement() {}
}
