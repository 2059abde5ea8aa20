// The built-in collection cells (basic, button, spinner), each a small ListCell of CellContent. Apple only.

#if canImport(UIKit) && !os(watchOS) && !os(tvOS)
  public import SimpleSourceScreens
  public import SimpleSourceViews
  public import UIKit

  /// The base of the built-in collection cells: a `UICollectionViewCell` that is a ``ListCell`` of
  /// ``CellContent`` showing its title in a label (``CellKind/basic``).
  ///
  /// Every method of the built-in collection cells is O(1), plus UIKit's own layout.
  @MainActor
  open class CollectionCellBasic: UICollectionViewCell, ListCell {
    /// Kept by the factory.
    public var cellContext: CellContext?
    /// The title.
    public let titleLabel = UILabel()

    /// Adds the label.
    open func configure() { contentView.addSubview(titleLabel) }

    /// Clears the title.
    open func reset() { titleLabel.text = nil }

    /// Shows the title.
    open func update(with model: CellContent) { titleLabel.text = model.title }

    open override func layoutSubviews() {
      super.layoutSubviews()
      titleLabel.frame = contentView.bounds.insetBy(dx: 8, dy: 8)
    }
  }

  /// A button filling the cell (``CellKind/button``); tapping it sends ``CellAction/tapped``.
  final class CollectionCellButton: CollectionCellBasic {
    /// The button.
    let button = UIButton(type: .system)

    override func configure() {
      contentView.addSubview(button)
      button.addAction(UIAction { [weak self] _ in self?.send(.tapped) }, for: .touchUpInside)
    }

    override func layoutSubviews() {
      super.layoutSubviews()
      button.frame = contentView.bounds
    }

    override func update(with model: CellContent) { button.setTitle(model.title, for: .normal) }
  }

  /// A spinning activity indicator (``CellKind/spinner``).
  final class CollectionCellSpinner: CollectionCellBasic {
    /// The indicator.
    let spinner = UIActivityIndicatorView(style: .medium)

    override func configure() { contentView.addSubview(spinner) }

    override func layoutSubviews() {
      super.layoutSubviews()
      spinner.center = CGPoint(x: contentView.bounds.midX, y: contentView.bounds.midY)
    }

    override func update(with model: CellContent) { spinner.startAnimating() }
  }

  extension ViewFactory where View == UICollectionView {
    /// The built-in collection cell class of `kind`, or `nil` for kinds collections have no cell for
    /// (every kind but basic, button and spinner).
    package static func builtInCellClass(for kind: CellKind) -> CollectionCellBasic.Type? {
      switch kind {
      case .basic: CollectionCellBasic.self
      case .button: CollectionCellButton.self
      case .spinner: CollectionCellSpinner.self
      default: nil
      }
    }

    /// Registers the built-in collection cells under their kinds' names, showing `content(item)`.
    public func registerBuiltInCells(
      in collectionView: UICollectionView, content: @escaping @MainActor (Item) -> CellContent
    ) {
      for kind in CellKind.allCases {
        guard let cellClass = Self.builtInCellClass(for: kind) else { continue }
        registerCell(
          cellClass, method: .class, reuseIdentifier: kind.rawValue, in: collectionView, model: content)
      }
    }
  }
#endif
