// A JSON value, as the wire carries what it does not type: the fields of a patch, the arguments of a
// named edit.

/// A JSON value: a ``WirePatch``'s document, a named edit's arguments (``WireCall``), an item's encoded
/// form.
public indirect enum WireJSON: Hashable, Sendable {
  /// `null`: in a patch, removes the member.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number with no fraction that fits in an `Int`.
  case integer(Int)
  /// Any other number.
  case number(Double)
  /// A string.
  case string(String)
  /// An array: it replaces an array whole (RFC 7396 does not patch arrays).
  case array([WireJSON])
  /// An object: it patches an object member by member.
  case object([String: WireJSON])
}

extension WireJSON: Codable {
  /// Reads any JSON value; a whole number that fits an `Int` is ``integer(_:)``.
  public init(from decoder: any Decoder) throws {
    if let container = try? decoder.container(keyedBy: AnyKey.self) {
      var members: [String: Self] = [:]
      for key in container.allKeys { members[key.stringValue] = try container.decode(Self.self, forKey: key) }
      self = .object(members)
    } else if var container = try? decoder.unkeyedContainer() {
      var elements: [Self] = []
      while !container.isAtEnd { elements.append(try container.decode(Self.self)) }
      self = .array(elements)
    } else {
      let container = try decoder.singleValueContainer()
      if container.decodeNil() {
        self = .null
      } else if let value = try? container.decode(Bool.self) {
        self = .bool(value)
      } else if let value = try? container.decode(Int.self) {
        self = .integer(value)
      } else if let value = try? container.decode(Double.self) {
        self = .number(value)
      } else {
        self = .string(try container.decode(String.self))
      }
    }
  }

  /// Writes the value as JSON.
  public func encode(to encoder: any Encoder) throws {
    switch self {
    case .object(let members):
      var container = encoder.container(keyedBy: AnyKey.self)
      for (name, member) in members { try container.encode(member, forKey: AnyKey(name)) }
    case .array(let elements):
      var container = encoder.unkeyedContainer()
      for element in elements { try container.encode(element) }
    case .null:
      var container = encoder.singleValueContainer()
      try container.encodeNil()
    case .bool(let value):
      var container = encoder.singleValueContainer()
      try container.encode(value)
    case .integer(let value):
      var container = encoder.singleValueContainer()
      try container.encode(value)
    case .number(let value):
      var container = encoder.singleValueContainer()
      try container.encode(value)
    case .string(let value):
      var container = encoder.singleValueContainer()
      try container.encode(value)
    }
  }

  /// A coding key of any name: an object's members.
  struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }
}

extension WireJSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
  ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral,
  ExpressibleByDictionaryLiteral
{
  /// A string.
  public init(stringLiteral value: String) { self = .string(value) }
  /// A whole number.
  public init(integerLiteral value: Int) { self = .integer(value) }
  /// A number.
  public init(floatLiteral value: Double) { self = .number(value) }
  /// `true` or `false`.
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  /// `null`: in a patch, removes the member.
  public init(nilLiteral: ()) { self = .null }
  /// An array.
  public init(arrayLiteral elements: Self...) { self = .array(elements) }
  /// An object.
  public init(dictionaryLiteral elements: (String, Self)...) {
    self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
  }
}
