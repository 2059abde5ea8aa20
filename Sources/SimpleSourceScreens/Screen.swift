// Screens described in JSON: items with an identifier, a cell kind, what the cell shows and an optional child.

public import SimpleSourceCore
public import Foundation

/// The built-in kinds of cell: AEViewModel's table cell types (collections have ``basic``, ``button`` and
/// ``spinner``). The UIKit skin has a cell class for each (`TableCells`, `CollectionCells`).
public enum CellKind: String, Codable, Sendable, Hashable, CaseIterable {
  case basic, subtitle, leftDetail, rightDetail, toggle, toggleWithSubtitle, slider, sliderWithLabels
  case textField, textView, button, spinner

  /// Decodes a kind by its name; an unknown name is an error carrying that name.
  public init(from decoder: any Decoder) throws {
    let name = try decoder.singleValueContainer().decode(String.self)
    guard let kind = CellKind(rawValue: name) else {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(codingPath: decoder.codingPath, debugDescription: name))
    }
    self = kind
  }

  /// Whether a collection view has a built-in cell of this kind.
  package var isAvailableInCollections: Bool { [.basic, .button, .spinner].contains(self) }
}

/// What a built-in cell shows; each kind reads the fields it needs and ignores the others.
public struct CellContent: Codable, Sendable, Hashable {
  /// The main text (every kind).
  public var title: String?
  /// A second line (``CellKind/subtitle``, ``CellKind/toggleWithSubtitle``).
  public var subtitle: String?
  /// A detail text (``CellKind/leftDetail``, ``CellKind/rightDetail``).
  public var detail: String?
  /// A switch's state (``CellKind/toggle``, ``CellKind/toggleWithSubtitle``).
  public var isOn: Bool?
  /// A slider's value (``CellKind/slider``, ``CellKind/sliderWithLabels``).
  public var value: Double?
  /// A slider's least value; 0 when left out.
  public var minimum: Double?
  /// A slider's greatest value; 1 when left out.
  public var maximum: Double?
  /// The text of a field or text view (``CellKind/textField``, ``CellKind/textView``).
  public var text: String?
  /// What an empty field shows.
  public var placeholder: String?

  /// Creates content; every field is optional.
  public init(
    title: String? = nil, subtitle: String? = nil, detail: String? = nil, isOn: Bool? = nil,
    value: Double? = nil, minimum: Double? = nil, maximum: Double? = nil, text: String? = nil,
    placeholder: String? = nil
  ) {
    self.title = title
    self.subtitle = subtitle
    self.detail = detail
    self.isOn = isOn
    self.value = value
    self.minimum = minimum
    self.maximum = maximum
    self.text = text
    self.placeholder = placeholder
  }
}

/// One row of a ``Screen``: an identifier, the kind of cell that shows it, what the cell shows, and an
/// optional child screen that the row opens (AEViewModel's `Item`: identifier, view model, child).
public struct ScreenItem: Identifiable, Codable, Sendable, Hashable {
  /// The identifier; unique in its screen.
  public var id: String
  /// The built-in cell that shows it.
  public var cell: CellKind
  /// What the cell shows.
  public var content: CellContent
  /// The screen this row opens, if any: a source of its own (``Screen/dataSource()``).
  public var child: Screen?

  /// Creates an item.
  public init(id: String, cell: CellKind, content: CellContent = CellContent(), child: Screen? = nil) {
    self.id = id
    self.cell = cell
    self.content = content
    self.child = child
  }

  private enum CodingKeys: String, CodingKey {
    case id, cell, content, child
  }

  /// Decodes an item; `content` may be left out.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    id = try container.decode(String.self, forKey: .id)
    cell = try container.decode(CellKind.self, forKey: .cell)
    content = try container.decodeIfPresent(CellContent.self, forKey: .content) ?? CellContent()
    child = try container.decodeIfPresent(Screen.self, forKey: .child)
  }
}

/// A section of a ``Screen``: the ready ``Section`` with string ids and ``ScreenItem``s.
public typealias ScreenSection = Section<String, ScreenItem>

/// A settings screen or a form described as data, typically JSON, and shown with the built-in cells:
///
/// ```json
/// { "title": "Settings",
///   "sections": [
///     { "id": "network", "header": "Network", "items": [
///       { "id": "wifi", "cell": "toggle", "content": { "title": "Wi-Fi", "isOn": true } },
///       { "id": "vpn", "cell": "basic", "content": { "title": "VPN" },
///         "child": { "title": "VPN", "sections": [] } } ] } ] }
/// ```
///
/// ``init(json:)`` checks everything before anything is shown: a missing field, an unknown cell kind or a
/// duplicate id is a ``ScreenError`` naming its JSON path.
public struct Screen: Codable, Sendable, Hashable {
  /// The screen's title.
  public var title: String?
  /// Its sections, in order.
  public var sections: [ScreenSection]

  /// Creates a screen.
  public init(title: String? = nil, sections: [ScreenSection]) {
    self.title = title
    self.sections = sections
  }

  /// Decodes and checks a screen and every child screen in it.
  /// - Throws: ``ScreenError`` naming the JSON path of the first problem.
  /// - Complexity: O(*n*) in the size of the JSON.
  public init(json data: Data) throws(ScreenError) {
    let screen: Screen
    do {
      screen = try JSONDecoder().decode(Screen.self, from: data)
    } catch let error as DecodingError {
      throw ScreenError(error)
    } catch {
      throw ScreenError(path: "$", reason: .malformed("\(error)"))
    }
    try screen.validate(at: "$")
    self = screen
  }

  /// A source of this screen's sections, to follow in a view.
  /// - Throws: ``DataSourceError`` for duplicate ids (``init(json:)`` has checked them already).
  public func dataSource() throws(DataSourceError<String, String>) -> BasicDataSource<ScreenSection> {
    try BasicDataSource(sections: sections)
  }

  /// Checks that ids are unique within this screen and in each child screen.
  func validate(at root: String) throws(ScreenError) {
    var sectionIDs = Set<String>()
    var itemIDs = Set<String>()
    for (sectionIndex, section) in sections.enumerated() {
      let sectionPath = "\(root).sections[\(sectionIndex)]"
      guard sectionIDs.insert(section.id).inserted else {
        throw ScreenError(path: sectionPath + ".id", reason: .duplicateID(section.id))
      }
      for (itemIndex, item) in section.items.enumerated() {
        let itemPath = "\(sectionPath).items[\(itemIndex)]"
        guard itemIDs.insert(item.id).inserted else {
          throw ScreenError(path: itemPath + ".id", reason: .duplicateID(item.id))
        }
        try item.child?.validate(at: itemPath + ".child")
      }
    }
  }
}

/// A screen's JSON that cannot be shown, and where: `$.sections[1].items[0].cell`.
public struct ScreenError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What was wrong.
  public enum Reason: Sendable, Hashable {
    /// A required field is missing: `id`, `cell`, `sections`.
    case missingField(String)
    /// A `cell` names no built-in kind.
    case unknownCellKind(String)
    /// An id appears twice in one screen.
    case duplicateID(String)
    /// A value of the wrong type, or JSON that does not parse.
    case malformed(String)
  }

  /// The JSON path of the problem, from `$` (the document).
  public let path: String
  /// What was wrong there.
  public let reason: Reason

  /// Creates an error.
  package init(path: String, reason: Reason) {
    self.path = path
    self.reason = reason
  }

  init(_ error: DecodingError) {
    func path(_ codingPath: [any CodingKey]) -> String {
      codingPath.reduce("$") { path, key in
        key.intValue.map { "\(path)[\($0)]" } ?? "\(path).\(key.stringValue)"
      }
    }
    switch error {
    case .keyNotFound(let key, let context):
      self.init(path: path(context.codingPath + [key]), reason: .missingField(key.stringValue))
    case .dataCorrupted(let context) where context.codingPath.last?.stringValue == "cell":
      self.init(path: path(context.codingPath), reason: .unknownCellKind(context.debugDescription))
    case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
      self.init(path: path(context.codingPath), reason: .malformed(context.debugDescription))
    @unknown default:
      self.init(path: "$", reason: .malformed("\(error)"))
    }
  }

  /// `$.sections[0].items[1].cell: unknown cell kind …`.
  public var description: String {
    switch reason {
    case .missingField(let field): "\(path): missing field '\(field)'"
    case .unknownCellKind(let name): "\(path): unknown cell kind '\(name)'"
    case .duplicateID(let id): "\(path): duplicate id '\(id)'"
    case .malformed(let detail): "\(path): \(detail)"
    }
  }
}
