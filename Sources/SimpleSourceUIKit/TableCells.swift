// The built-in table cells, one per CellKind, each a small ListCell showing CellContent. Apple platforms only.

#if canImport(UIKit) && !os(watchOS) && !os(tvOS)
  public import SimpleSourceCore
  public import SimpleSourceScreens
  public import SimpleSourceViews
  public import UIKit

  /// The base of the built-in table cells: a `UITableViewCell` that is a ``ListCell`` of ``CellContent``,
  /// made with its class's ``style``. Subclass it for a cell of your own that fits the same protocol.
  ///
  /// Every method of the built-in table cells is O(1), plus UIKit's own layout.
  @MainActor
  open class TableCellBasic: UITableViewCell, ListCell {
    /// Kept by the factory.
    public var cellContext: CellContext?

    /// The built-in style the cell is made with.
    open class var style: UITableViewCell.CellStyle { .default }

    /// Makes the cell with the class's ``style``, whatever `style` says.
    public override init(style: UITableViewCell.CellStyle, reuseIdentifier: String?) {
      super.init(style: Self.style, reuseIdentifier: reuseIdentifier)
    }

    /// Cells from a storyboard or nib.
    public required init?(coder: NSCoder) {
      super.init(coder: coder)
    }

    /// Sets up subviews; nothing for the text cells.
    open func configure() {}

    /// Clears the texts.
    open func reset() {
      textLabel?.text = nil
      detailTextLabel?.text = nil
    }

    /// Shows the title, and the subtitle or detail in the second label of the styles that have one.
    open func update(with model: CellContent) {
      textLabel?.text = model.title
      detailTextLabel?.text = model.subtitle ?? model.detail
    }

    /// Lays out `control` in the trailing part of the content view, after the labels' share.
    func place(_ control: UIView, fraction: CGFloat) {
      let bounds = contentView.bounds.insetBy(dx: 16, dy: 4)
      control.frame = bounds.divided(atDistance: bounds.width * fraction, from: .maxXEdge).slice
    }
  }

  /// A title and a subtitle below it (``CellKind/subtitle``).
  final class TableCellSubtitle: TableCellBasic {
    override class var style: UITableViewCell.CellStyle { .subtitle }
  }

  /// A detail label before the title (``CellKind/leftDetail``).
  final class TableCellLeftDetail: TableCellBasic {
    override class var style: UITableViewCell.CellStyle { .value2 }
  }

  /// A detail label at the trailing edge (``CellKind/rightDetail``).
  final class TableCellRightDetail: TableCellBasic {
    override class var style: UITableViewCell.CellStyle { .value1 }
  }

  /// A title and a switch (``CellKind/toggle``); flipping it sends ``CellAction/toggled(_:)``.
  class TableCellToggle: TableCellBasic {
    /// The switch.
    let toggle = UISwitch()

    override func configure() {
      accessoryView = toggle
      toggle.addAction(UIAction { [weak self] _ in self?.switched() }, for: .valueChanged)
    }

    private func switched() { send(.toggled(toggle.isOn)) }

    override func reset() {
      super.reset()
      toggle.isOn = false
    }

    override func update(with model: CellContent) {
      super.update(with: model)
      toggle.isOn = model.isOn ?? false
    }
  }

  /// A switch with a subtitle (``CellKind/toggleWithSubtitle``).
  final class TableCellToggleWithSubtitle: TableCellToggle {
    override class var style: UITableViewCell.CellStyle { .subtitle }
  }

  /// A title and a slider (``CellKind/slider``); moving it sends ``CellAction/slid(_:)``.
  class TableCellSlider: TableCellBasic {
    /// The slider.
    let slider = UISlider()

    override func configure() {
      contentView.addSubview(slider)
      slider.addAction(UIAction { [weak self] _ in self?.slid() }, for: .valueChanged)
    }

    private func slid() { send(.slid(Double(slider.value))) }

    override func layoutSubviews() {
      super.layoutSubviews()
      place(slider, fraction: 0.6)
    }

    override func update(with model: CellContent) {
      super.update(with: model)
      slider.minimumValue = Float(model.minimum ?? 0)
      slider.maximumValue = Float(model.maximum ?? 1)
      slider.value = Float(model.value ?? model.minimum ?? 0)
    }
  }

  /// A slider with its range's ends as labels (``CellKind/sliderWithLabels``).
  final class TableCellSliderWithLabels: TableCellSlider {
    override class var style: UITableViewCell.CellStyle { .subtitle }

    override func update(with model: CellContent) {
      super.update(with: model)
      let minimum = model.minimum ?? 0
      let maximum = model.maximum ?? 1
      detailTextLabel?.text = model.subtitle ?? "\(minimum) – \(maximum)"
    }
  }

  /// A title and a text field (``CellKind/textField``); editing sends ``CellAction/textChanged(_:)``.
  final class TableCellTextField: TableCellBasic {
    /// The field.
    let textField = UITextField()

    override func configure() {
      contentView.addSubview(textField)
      textField.addAction(UIAction { [weak self] _ in self?.edited() }, for: .editingChanged)
    }

    private func edited() { send(.textChanged(textField.text ?? "")) }

    override func layoutSubviews() {
      super.layoutSubviews()
      place(textField, fraction: 0.6)
    }

    override func reset() {
      super.reset()
      textField.text = nil
    }

    override func update(with model: CellContent) {
      super.update(with: model)
      if textField.text != model.text { textField.text = model.text }
      textField.placeholder = model.placeholder
    }
  }

  /// A text view filling the cell (``CellKind/textView``); editing sends ``CellAction/textChanged(_:)``.
  final class TableCellTextView: TableCellBasic, UITextViewDelegate {
    /// The text view.
    let textView = UITextView()

    override func configure() {
      contentView.addSubview(textView)
      textView.delegate = self
    }

    /// Sends the new text.
    func textViewDidChange(_ textView: UITextView) { send(.textChanged(textView.text ?? "")) }

    override func layoutSubviews() {
      super.layoutSubviews()
      place(textView, fraction: 1)
    }

    override func reset() {
      super.reset()
      textView.text = nil
    }

    override func update(with model: CellContent) {
      if textView.text != model.text { textView.text = model.text }
    }
  }

  /// A button filling the cell (``CellKind/button``); tapping it sends ``CellAction/tapped``.
  final class TableCellButton: TableCellBasic {
    /// The button.
    let button = UIButton(type: .system)

    override func configure() {
      contentView.addSubview(button)
      button.addAction(UIAction { [weak self] _ in self?.send(.tapped) }, for: .touchUpInside)
    }

    override func layoutSubviews() {
      super.layoutSubviews()
      place(button, fraction: 1)
    }

    override func update(with model: CellContent) {
      button.setTitle(model.title, for: .normal)
    }
  }

  /// A spinning activity indicator, for a row that is loading (``CellKind/spinner``).
  final class TableCellSpinner: TableCellBasic {
    /// The indicator.
    let spinner = UIActivityIndicatorView(style: .medium)

    override func configure() {
      contentView.addSubview(spinner)
    }

    override func layoutSubviews() {
      super.layoutSubviews()
      spinner.center = CGPoint(x: contentView.bounds.midX, y: contentView.bounds.midY)
    }

    override func update(with model: CellContent) {
      super.update(with: model)
      spinner.startAnimating()
    }
  }

  extension ViewFactory where View == UITableView {
    /// The built-in cell class of `kind`.
    package static func builtInCellClass(for kind: CellKind) -> TableCellBasic.Type {
      switch kind {
      case .basic: TableCellBasic.self
      case .subtitle: TableCellSubtitle.self
      case .leftDetail: TableCellLeftDetail.self
      case .rightDetail: TableCellRightDetail.self
      case .toggle: TableCellToggle.self
      case .toggleWithSubtitle: TableCellToggleWithSubtitle.self
      case .slider: TableCellSlider.self
      case .sliderWithLabels: TableCellSliderWithLabels.self
      case .textField: TableCellTextField.self
      case .textView: TableCellTextView.self
      case .button: TableCellButton.self
      case .spinner: TableCellSpinner.self
      }
    }

    /// Registers the built-in cell of every ``CellKind`` under the kind's name as reuse identifier, showing
    /// `content(item)`; the factory's reuse identifier closure picks the kind of each item.
    public func registerBuiltInCells(
      in tableView: UITableView, content: @escaping @MainActor (Item) -> CellContent
    ) {
      for kind in CellKind.allCases {
        registerCell(
          Self.builtInCellClass(for: kind), method: .class, reuseIdentifier: kind.rawValue, in: tableView,
          model: content)
      }
    }
  }

  extension ViewFactory where View == UITableView, Section == ScreenSection {
    /// A factory for a ``Screen``: every item shown by the built-in cell its `cell` names.
    public static func screen(in tableView: UITableView) -> ViewFactory {
      let factory = ViewFactory { item, _ in item.cell.rawValue }
      factory.registerBuiltInCells(in: tableView) { $0.content }
      return factory
    }
  }
#endif
