// Named edits: an edit declared once in Swift, a name, Codable arguments and a body over a Transaction,
// run at once on the client's state and run again, authoritatively, on the server's current state.

import Foundation
public import SimpleSourceCore

/// Why a named edit's body refused to make its change: thrown from the body, it reaches the client as
/// the edit's refusal (``WireError/Code-swift.struct/invalidEdit``, `editRefused: <reason>`).
public struct EditRefusal: Error, Hashable, Sendable, CustomStringConvertible {
  /// Why, in words the client may be shown.
  public var reason: String

  /// Creates a refusal.
  public init(_ reason: String) { self.reason = reason }

  /// The reason.
  public var description: String { reason }
}

/// An edit declared once, by name, and run on both sides: by the client at once on what it shows, and by
/// the server again on its current state, inside the write's transaction.
///
/// A named edit says *what* to do, not what the result is: the client sends only its name and its
/// arguments, and the server runs the same body on the state it holds when the edit's turn comes. While
/// the edit is pending, the client runs it again on top of every newer state the server sends (not a
/// replay of the rows it wrote), so what another writer changed meanwhile, in the same item or another,
/// is what the body sees, on both sides.
///
/// ```swift
/// struct Advance: Codable, Sendable { var deal: String; var to: String }
/// let advance = NamedEdit<Pipeline, Advance>("advance") { arguments, transaction in
///   guard var deal = transaction.snapshot.item(withID: arguments.deal) else {
///     throw EditRefusal("no deal \(arguments.deal)")
///   }
///   guard deal.stage != "lost" else { throw EditRefusal("a lost deal stays lost") }
///   deal.stage = arguments.to
///   try transaction.replaceItem(deal)
/// }
/// let edits = NamedEdits<Pipeline>([advance])
/// // Server: WireWriter.transactions(on: pipeline, named: edits). Client: RemoteDataSource(named: edits).
/// try await remote.edit([advance(Advance(deal: "d42", to: "won"))])
/// ```
///
/// The body must be a pure function of its arguments and the transaction's state: it runs once on the
/// client for each state it is shown on, and once on the server. It refuses by throwing an
/// ``EditRefusal`` (or a ``DataSourceError`` from the transaction); the server answers that as a typed
/// refusal and makes nothing.
public struct NamedEdit<Section: SectionType, Arguments: Codable & Sendable>: Sendable {
  /// The name clients send; unique among a service's named edits.
  public let name: String
  /// The change: reads the state through the transaction and edits it, or throws.
  public let body: @Sendable (Arguments, inout Transaction<Section>) throws -> Void
  /// What a call made by this edit carries: the server runs such a call's body as it is, since it is
  /// this edit's own (a call from elsewhere is resolved by name).
  let identity = NamedEditIdentity()

  /// Declares a named edit.
  /// - Parameters:
  ///   - name: The name clients send.
  ///   - body: The change, a pure function of the arguments and the state.
  public init(
    _ name: String, _ body: @escaping @Sendable (Arguments, inout Transaction<Section>) throws -> Void
  ) {
    self.name = name
    self.body = body
  }

  /// The operation that runs this edit with `arguments`: give it to ``RemoteDataSource/edit(_:)``.
  /// - Complexity: O(1); the arguments are encoded only when the operation is sent as bytes.
  public func callAsFunction(_ arguments: Arguments) -> WireOperation<Section> {
    let body = self.body
    return .named(
      WireCall(
        name: name, arguments: .typed(arguments, encode: { try WirePatch.encoded(arguments) }),
        body: { transaction throws in try body(arguments, &transaction) }, origin: identity))
  }

  /// The body run with the call's arguments: its own typed value when it was made in this process,
  /// decoded from JSON otherwise.
  /// - Throws: ``WireError/Code-swift.struct/invalidEdit`` (`invalidArguments`) when they do not decode.
  /// - Complexity: O(1) for a call made here; O(*s*) in the size of the arguments from the wire.
  public func resolve(_ call: WireCall<Section>) throws(WireError)
    -> @Sendable (inout Transaction<Section>) throws
    -> Void
  {
    // Made by this very edit, in this process: its body is this edit's, with its own arguments.
    if call.origin === identity, let body = call.body { return body }
    let arguments: Arguments
    switch call.arguments {
    case .typed(let value as Arguments, _):
      arguments = value
    case .typed(_, let encode):
      arguments = try Self.decode(name, from: try? encode())
    case .json(let json):
      arguments = try Self.decode(name, from: json)
    }
    let body = self.body
    return { transaction throws in try body(arguments, &transaction) }
  }

  /// The arguments `json` holds.
  static func decode(_ name: String, from json: WireJSON?) throws(WireError) -> Arguments {
    do {
      guard let json else { throw EditRefusal("the arguments do not encode") }
      return try JSONDecoder().decode(Arguments.self, from: try JSONEncoder().encode(json))
    } catch {
      throw WireError(.invalidEdit, "invalidArguments: edit \(name): \(WirePatch.reason(error))")
    }
  }
}

/// A call of a named edit, as a ``WireOperation/named(_:)`` carries it: the edit's name and its
/// arguments.
///
/// Made by a ``NamedEdit`` in this process, it holds the arguments' typed value and the body to run on
/// what the client shows; decoded from the wire, it holds the arguments as JSON, and the body is found by
/// name (``NamedEdits``). On the wire: `{"op": "named", "name": "advance", "arguments": {…}}`.
public struct WireCall<Section: SectionType>: Sendable, CustomStringConvertible {
  /// The arguments: a typed value made here, or JSON from the wire.
  @usableFromInline enum Arguments: Sendable {
    case typed(any Sendable, encode: @Sendable () throws -> WireJSON)
    case json(WireJSON)
  }

  /// The named edit's name.
  public let name: String
  @usableFromInline let arguments: Arguments
  /// The body with its arguments, where the call was made or resolved.
  @usableFromInline let body: (@Sendable (inout Transaction<Section>) throws -> Void)?
  /// The ``NamedEdit`` that made the call in this process, if one did.
  @usableFromInline let origin: NamedEditIdentity?

  @usableFromInline init(
    name: String, arguments: Arguments, body: (@Sendable (inout Transaction<Section>) throws -> Void)?,
    origin: NamedEditIdentity? = nil
  ) {
    self.name = name
    self.arguments = arguments
    self.body = body
    self.origin = origin
  }

  /// A call of the edit `name` with `arguments`, as a client that cannot run Swift sends it: the body is
  /// found by name where it runs.
  public init(_ name: String, arguments: WireJSON) {
    self.init(name: name, arguments: .json(arguments), body: nil)
  }

  /// The arguments as JSON; `nil` when they do not encode.
  /// - Complexity: O(*s*) in their size when they were made here; O(1) from the wire.
  public var json: WireJSON? {
    switch arguments {
    case .typed(_, let encode): try? encode()
    case .json(let json): json
    }
  }

  /// `advance({"deal":"d42","to":"won"})`.
  public var description: String {
    "\(name)(\(json.map { WirePatch($0).description } ?? "?"))"
  }

  /// Runs the body in `transaction`, on a copy: a body that throws halfway leaves it as it was.
  /// - Throws: ``DataSourceError``: the transaction's own, or ``DataSourceErrorCode/editRefused`` with the
  ///   body's error (an ``EditRefusal``'s reason) or, with no body known here, that.
  @inlinable
  func run(on transaction: inout Transaction<Section>) throws(DataSourceError<Section.ID, Section.Item.ID>) {
    guard let body else {
      throw DataSourceError(code: .editRefused, detail: "no body is known here for the named edit \(name)")
    }
    var copy = transaction
    do {
      try body(&copy)
    } catch let error as DataSourceError<Section.ID, Section.Item.ID> {
      throw error
    } catch {
      throw DataSourceError(code: .editRefused, detail: "\(error)")
    }
    transaction = copy
  }

  /// The same call with the body `edits` gives its name, and whether that is another body than the one
  /// it carries (not so for a call made here by the edit `edits` holds).
  /// - Throws: ``WireError/Code-swift.struct/invalidEdit`` for a name `edits` does not hold, or arguments
  ///   that do not decode.
  @inlinable
  func resolved(in edits: NamedEdits<Section>) throws(WireError) -> (call: Self, changed: Bool) {
    guard let edit = edits.edits[name] else { throw edits.unknown(name) }
    if let origin, edit.isOrigin(origin), body != nil { return (self, false) }
    return (Self(name: name, arguments: arguments, body: try edit.resolve(self)), true)
  }
}

extension WireCall: Equatable {
  /// Two calls are equal when they name the same edit with arguments that encode alike.
  /// - Complexity: O(*s*) in the size of the arguments.
  public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name && lhs.json == rhs.json }
}

/// The named edits one side runs, by name: give the same set to the service's writer
/// (``WireWriter/transactions(on:named:)``) and to each Swift client (``RemoteDataSource``'s `named:`).
public struct NamedEdits<Section: SectionType>: Sendable {
  /// Each edit's resolver, by name.
  @usableFromInline let edits: [String: any NamedEditResolving]

  /// No named edits: a call of any is refused.
  public init() { edits = [:] }

  /// The named edits given (``NamedEdit``s of this section type, of any arguments); a later one of a name
  /// replaces an earlier one.
  /// - Precondition: each edit is a ``NamedEdit`` of `Section`.
  public init(_ edits: [any NamedEditResolving]) {
    var byName: [String: any NamedEditResolving] = [:]
    for edit in edits {
      precondition(
        edit.sectionType == Section.self,
        "SimpleSource: the named edit \(edit.name) edits \(edit.sectionType), not \(Section.self)")
      byName[edit.name] = edit
    }
    self.edits = byName
  }

  /// The names it holds.
  public var names: Set<String> { Set(edits.keys) }

  /// The refusal of a call of a name it does not hold.
  @usableFromInline func unknown(_ name: String) -> WireError {
    WireError(.invalidEdit, "unknownEdit: no named edit \(name)")
  }
}

/// A named edit of any section and arguments, as ``NamedEdits`` holds it: a ``NamedEdit``.
public protocol NamedEditResolving: Sendable {
  /// The name clients send.
  var name: String { get }
  /// The section type it edits.
  var sectionType: any SectionType.Type { get }
  /// The body with the call's arguments; throws ``WireError/Code-swift.struct/invalidEdit`` when they
  /// do not decode, or the call is of another section type.
  func resolve<Section: SectionType>(_ call: WireCall<Section>) throws(WireError)
    -> @Sendable (inout Transaction<Section>) throws -> Void
  /// Whether `identity` is this edit's: a call it made carries it.
  func isOrigin(_ identity: NamedEditIdentity) -> Bool
}

extension NamedEdit: NamedEditResolving {
  /// The section type it edits.
  public var sectionType: any SectionType.Type { Section.self }

  /// Whether `identity` is this edit's.
  public func isOrigin(_ identity: NamedEditIdentity) -> Bool { identity === self.identity }

  /// The body with the call's arguments, for a call of this edit's section type.
  public func resolve<Other: SectionType>(_ call: WireCall<Other>) throws(WireError)
    -> @Sendable (inout Transaction<Other>) throws -> Void
  {
    guard let own = call as? WireCall<Section>,
      let body = try resolve(own) as? @Sendable (inout Transaction<Other>) throws -> Void
    else {
      throw WireError(.invalidEdit, "unknownEdit: no named edit \(call.name) of these sections")
    }
    return body
  }
}

/// What tells the calls a ``NamedEdit`` made from any other call of its name: a server runs such a call's
/// body as it is, without decoding its arguments again.
public final class NamedEditIdentity: Sendable {
  init() {}
}

extension DataSourceErrorCode {
  /// A named edit's body refused (``EditRefusal``), or the named edit could not be run here (no body is
  /// known for its name); ``DataSourceError/detail`` says why.
  public static let editRefused = DataSourceErrorCode(rawValue: "editRefused")
}
