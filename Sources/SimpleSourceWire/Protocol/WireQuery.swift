// Live queries: what a client may ask for by name, with typed parameters, and what the server makes of it.

public import SimpleSourceCore

/// A parameter's value on the wire: a JSON string, integer, number or boolean.
public enum WireValue: Hashable, Sendable, CustomStringConvertible {
  /// A JSON string.
  case string(String)
  /// A JSON number whose value is whole and fits in `Int`, however it is written (`20`, `20.0`, `2e1`).
  case integer(Int)
  /// Any other JSON number: one with a fraction, or whole and outside `Int`'s range.
  case number(Double)
  /// `true` or `false`.
  case bool(Bool)

  /// The kinds of value a parameter declares.
  public enum Kind: String, Hashable, Sendable, CustomStringConvertible {
    /// A string.
    case string
    /// An integer.
    case integer
    /// A number: an integer is accepted too.
    case number
    /// A boolean.
    case bool

    /// The kind's name, as in error messages.
    public var description: String { rawValue }

    /// The kind's name after "a" or "an", as error details read.
    var withArticle: String { self == .integer ? "an integer" : "a \(rawValue)" }
  }

  /// The value's kind.
  public var kind: Kind {
    switch self {
    case .string: .string
    case .integer: .integer
    case .number: .number
    case .bool: .bool
    }
  }

  /// The value as JSON text, as in error messages.
  public var description: String {
    switch self {
    case .string(let value): "\"\(value)\""
    case .integer(let value): "\(value)"
    case .number(let value): "\(value)"
    case .bool(let value): "\(value)"
    }
  }
}

extension WireValue: Codable {
  /// Reads a string, an integer (a number that is whole and fits), another number, or a boolean.
  ///
  /// The kind follows the value, not how it is written: a number read as a `Double` that is whole and
  /// fits in `Int` (`1.0000000000000000001e18` is `1e18` once read) is an integer, so a decoded value
  /// encodes and decodes again to the same value and the same bytes.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int.self) {
      self = .integer(value)
    } else if let value = try? container.decode(Double.self) {
      self = Int(exactly: value).map(WireValue.integer) ?? .number(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else {
      throw DecodingError.dataCorruptedError(
        in: container, debugDescription: "a parameter is a string, a number or a boolean")
    }
  }

  /// Writes the value as its JSON scalar.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .string(let value): try container.encode(value)
    case .integer(let value): try container.encode(value)
    case .number(let value): try container.encode(value)
    case .bool(let value): try container.encode(value)
    }
  }
}

/// What a client's `subscribe` asks for: a query the server declared, by name, with its parameters.
public struct WireQueryRequest: Hashable, Sendable, Codable {
  /// The query's name, as the server declared it.
  public var name: String
  /// The parameters, by name.
  public var parameters: [String: WireValue]

  /// Creates a request.
  public init(_ name: String, _ parameters: [String: WireValue] = [:]) {
    self.name = name
    self.parameters = parameters
  }

  private enum Key: String, CodingKey {
    case name, parameters
  }

  /// Reads `{"name": …, "parameters": {…}}`; `parameters` may be left out when there are none.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Key.self)
    name = try container.decode(String.self, forKey: .name)
    parameters = try container.decodeIfPresent([String: WireValue].self, forKey: .parameters) ?? [:]
  }

  /// Writes `{"name": …, "parameters": {…}}`, the parameters left out when there are none.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    try container.encode(name, forKey: .name)
    if !parameters.isEmpty { try container.encode(parameters, forKey: .parameters) }
  }
}

/// A query a server declares: its name, the parameters it takes with their kinds, and the projection it
/// shows for them.
///
/// ```swift
/// let column = WireQuery<Column>("column", parameters: ["column": .string]) { arguments in
///   let column = try arguments.string("column")
///   return Projection(isSectionIncluded: { $0.id == column })
/// }
/// ```
///
/// Every parameter it declares is required, and no other is accepted; ``make`` may refuse values it does
/// not take (a search text too long, a limit out of range) by throwing a ``WireQueryRefusal``.
///
/// **One view per meaning.** A service shares a view between the sessions of a scope that ask for the
/// same query with the same parameters. When the query reads two spellings alike (a search that ignores
/// case), say so with `canonical`, which maps the parameters to one form: every spelling is then one
/// view, stepped once per write and counted once against ``WireLimits/viewsPerScope``.
///
/// ```swift
/// let search = WireQuery<Column>(
///   "search", parameters: ["text": .string],
///   canonical: { $0.mapValues { if case .string(let text) = $0 { .string(text.lowercased()) } else { $0 } } }
/// ) { arguments in
///   let text = try arguments.string("text")
///   return Projection(isIncluded: { $0.title.lowercased().contains(text) })
/// }
/// ```
public struct WireQuery<Section: SectionType>: Sendable {
  /// The parameters' one form among those the query reads alike.
  public typealias Canonical = @Sendable (_ parameters: [String: WireValue]) -> [String: WireValue]

  /// The name clients ask for.
  public let name: String
  /// The parameters it takes, and their kinds.
  public let parameters: [String: WireValue.Kind]
  /// Maps checked parameters to their one form among those the query reads alike; `nil`: every spelling
  /// is its own.
  public let canonical: Canonical?
  /// The projection for a request's parameters, already checked against ``parameters``.
  public let make: @Sendable (WireQueryArguments) throws(WireQueryRefusal) -> Projection<Section>
  /// The projection's steps, made here, in the declaring module, where the build specialises them for
  /// `Section`: a service steps every view of the query through them, not through generic code.
  @usableFromInline let steps: ProjectionSteps<Section>

  /// Declares a query.
  /// - Parameters:
  ///   - name: The name clients ask for.
  ///   - parameters: The parameters it takes, and their kinds.
  ///   - canonical: Maps checked parameters to one form among those ``make`` reads alike (folding a
  ///     search's case, trimming it); it must keep their kinds, and ``make`` must show the same rows for a
  ///     request and its canonical form. `nil`: every spelling is its own view.
  ///   - make: The projection for checked parameters (their canonical form, when `canonical` is given).
  @inlinable
  public init(
    _ name: String, parameters: [String: WireValue.Kind] = [:], canonical: Canonical? = nil,
    make: @escaping @Sendable (WireQueryArguments) throws(WireQueryRefusal) -> Projection<Section>
  ) {
    self.name = name
    self.parameters = parameters
    self.canonical = canonical
    self.make = make
    self.steps = ProjectionSteps()
  }

  /// `request` with its parameters checked against ``parameters`` and in their canonical form: what a
  /// service shares a view by.
  /// - Throws: ``WireError`` with ``WireError/Code-swift.struct/invalidParameters`` naming the parameter
  ///   missing, unknown, or of the wrong kind (before or after ``canonical``).
  /// - Complexity: O(number of parameters), plus ``canonical``.
  public func canonicalRequest(for request: WireQueryRequest) throws(WireError) -> WireQueryRequest {
    try check(request.parameters)
    guard let canonical else { return request }
    let folded = canonical(request.parameters)
    do {
      try check(folded)
    } catch {
      throw WireError(.invalidParameters, "query \(name): its canonical form changed a parameter's kind")
    }
    return WireQueryRequest(request.name, folded)
  }

  /// Checks `values` against ``parameters``.
  private func check(_ values: [String: WireValue]) throws(WireError) {
    for (parameter, kind) in parameters.sorted(by: { $0.key < $1.key }) {
      guard let value = values[parameter] else {
        throw WireError(.invalidParameters, "query \(name) needs the \(kind) parameter \(parameter)")
      }
      guard value.kind == kind || (kind == .number && value.kind == .integer) else {
        throw WireError(
          .invalidParameters,
          "query \(name): parameter \(parameter) must be \(kind.withArticle), not \(value.kind.withArticle)")
      }
    }
    if let unknown = values.keys.sorted().first(where: { parameters[$0] == nil }) {
      throw WireError(.invalidParameters, "query \(name) takes no parameter \(unknown)")
    }
  }

  /// The projection for `request` from a client of `scope`, its parameters checked first. A service
  /// applies its scope's rules to the projection as well, so a query never shows more than the scope.
  /// - Parameter scope: The client's scope, which ``make`` reads with ``WireQueryArguments/scope(as:)``
  ///   ("my tasks"); `nil` for none.
  /// - Throws: ``WireError`` with ``WireError/Code-swift.struct/invalidParameters`` naming the parameter
  ///   missing, unknown, or of the wrong kind, or what ``make`` refused.
  /// - Complexity: O(number of parameters), plus ``make``.
  public func projection(for request: WireQueryRequest, scope: (any Hashable & Sendable)? = nil)
    throws(WireError) -> Projection<Section>
  {
    let request = try canonicalRequest(for: request)
    do {
      return try make(WireQueryArguments(values: request.parameters, scope: scope))
    } catch {
      throw WireError(.invalidParameters, "query \(name): \(error.reason)")
    }
  }
}

/// Why a query refused its parameters; the client reads ``reason`` in the `error` message.
public struct WireQueryRefusal: Error, Hashable, Sendable, CustomStringConvertible {
  /// What was wrong, in words the client may read: never a row's content.
  public var reason: String

  /// Creates a refusal.
  public init(_ reason: String) { self.reason = reason }

  /// The reason.
  public var description: String { reason }
}

/// A query request's parameters, checked against the query's declaration, read by kind, and the scope of
/// the client that asked.
public struct WireQueryArguments: Sendable {
  /// The values, by parameter name.
  public let values: [String: WireValue]
  /// The scope of the client that asked; `nil` when the service has none.
  let scope: (any Hashable & Sendable)?

  /// Arguments with these values, asked by a client of `scope`.
  public init(values: [String: WireValue], scope: (any Hashable & Sendable)? = nil) {
    self.values = values
    self.scope = scope
  }

  /// The scope of the client that asked, as the service's scope type; `nil` when it is of another type or
  /// there is none.
  ///
  /// ```swift
  /// let mine = WireQuery<Board>("mine") { arguments in
  ///   let user = arguments.scope(as: String.self)
  ///   return Projection(where: { $0.assignee == user })
  /// }
  /// ```
  /// - Complexity: O(1).
  public func scope<Scope: Hashable & Sendable>(as type: Scope.Type) -> Scope? { scope as? Scope }

  /// The string parameter `name`.
  /// - Throws: ``WireQueryRefusal`` when the query did not declare it as a string.
  public func string(_ name: String) throws(WireQueryRefusal) -> String {
    guard case .string(let value) = values[name] else { throw Self.undeclared(name, .string) }
    return value
  }

  /// The integer parameter `name`.
  /// - Throws: ``WireQueryRefusal`` when the query did not declare it as an integer.
  public func integer(_ name: String) throws(WireQueryRefusal) -> Int {
    guard case .integer(let value) = values[name] else { throw Self.undeclared(name, .integer) }
    return value
  }

  /// The number parameter `name` (an integer is read as a number).
  /// - Throws: ``WireQueryRefusal`` when the query did not declare it as a number.
  public func number(_ name: String) throws(WireQueryRefusal) -> Double {
    switch values[name] {
    case .number(let value): return value
    case .integer(let value): return Double(value)
    default: throw Self.undeclared(name, .number)
    }
  }

  /// The boolean parameter `name`.
  /// - Throws: ``WireQueryRefusal`` when the query did not declare it as a boolean.
  public func bool(_ name: String) throws(WireQueryRefusal) -> Bool {
    guard case .bool(let value) = values[name] else { throw Self.undeclared(name, .bool) }
    return value
  }

  private static func undeclared(_ name: String, _ kind: WireValue.Kind) -> WireQueryRefusal {
    WireQueryRefusal("the server's query reads \(name) as a \(kind), which it does not declare")
  }
}
