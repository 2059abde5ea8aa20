// Messages to and from JSON bytes: one deterministic encoding, and decoding that only throws WireError.

public import SimpleSourceCore
public import Foundation

/// Encodes and decodes ``WireMessage``s as JSON, the form <doc:WireFormat> specifies.
///
/// Encoding is deterministic: keys sorted, no whitespace, slashes unescaped; the same message always
/// gives the same bytes. Decoding refuses, with a ``WireError``, anything that is not a message of this
/// format: bytes over ``maxMessageBytes``, truncated or invalid JSON, a missing field, another format.
///
/// A coder writes one format number (``formatVersion``, the newest by default); it reads every number in
/// ``WireMessage/readableFormatVersions``. A server answers each client in the number the client wrote
/// (``WireSession`` does), so clients of format 1 keep working.
public struct WireCoder: Sendable {
  /// The largest message ``decode(_:as:)`` reads, in bytes; 16 MiB by default.
  public var maxMessageBytes: Int
  /// The format number written in every message encoded.
  public let formatVersion: Int

  /// The largest message a server reads from a client, in bytes (1 MiB): a subscribe, a query, an edit,
  /// over a WebSocket (``WireSession``) or posted over HTTP (``WireService/edit(_:scope:)``). A transport
  /// that collects a client's message before handing it over bounds it by this too.
  public static let maxClientMessageBytes = 1 << 20

  /// Creates a coder.
  /// - Parameters:
  ///   - maxMessageBytes: The largest message it reads.
  ///   - formatVersion: The format number it writes: one of ``WireMessage/readableFormatVersions``.
  public init(maxMessageBytes: Int = 16 << 20, formatVersion: Int = 2) {
    precondition(
      (1...3).contains(formatVersion),
      "SimpleSource: wire format \(formatVersion) is not one this coder writes")
    self.maxMessageBytes = maxMessageBytes
    self.formatVersion = formatVersion
  }

  /// The JSON bytes of `message`: those of a sorted-key `JSONEncoder` (``WireMessage/encode(to:)``), the
  /// messages a server sends most (batches, confirmations) written directly.
  /// - Precondition: a `subscribe` with a query is written in format 2.
  /// - Complexity: O(size of the message).
  public func encode<Section>(_ message: WireMessage<Section>) -> Data
  where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
    switch message {
    case .confirmed(let edit, let version):
      if let bytes = confirmed(edit: edit, version: version, format: WireMessage<Section>.formatName) {
        return bytes
      }
    case .batch(let batch):
      return WireBatchWriter.batch(
        from: batch.from, to: batch.to, .wire(batch.stages), formatVersion: formatVersion)
    case .viewBatches(let from, let to, let batches):
      return WireBatchWriter.viewBatches(from: from, to: to, batches.mapValues { .wire($0.stages) })
    default: break
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.userInfo[WireMessageFormat.userInfoKey] = formatVersion
    do {
      return try encoder.encode(message)
    } catch {
      // Only the user's own `encode(to:)` can throw here; the message's own fields never do.
      preconditionFailure("SimpleSource: a section or item failed to encode: \(error)")
    }
  }

  /// The `confirmed` message, written directly: the answer to every edit a server makes, where a
  /// `JSONEncoder` would cost more than the edit. The bytes are the encoder's (sorted keys); an edit id
  /// with a character JSON escapes returns `nil`, and the encoder writes it.
  /// - Complexity: O(length of `edit`).
  func confirmed(edit: String, version: Int, format: String) -> Data? {
    let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
    let plain = edit.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != quote && $0 != backslash }
    guard formatVersion >= 2, plain else { return nil }
    // Bytes appended to one buffer: no intermediate strings, and the numbers are small strings.
    var bytes: [UInt8] = []
    bytes.reserveCapacity(edit.utf8.count + format.utf8.count + 80)
    bytes.append(contentsOf: #"{"edit":""#.utf8)
    bytes.append(contentsOf: edit.utf8)
    bytes.append(contentsOf: #"","format":""#.utf8)
    bytes.append(contentsOf: format.utf8)
    bytes.append(contentsOf: #"","formatVersion":"#.utf8)
    bytes.append(contentsOf: String(formatVersion).utf8)
    bytes.append(contentsOf: #","type":"confirmed","version":"#.utf8)
    bytes.append(contentsOf: String(version).utf8)
    bytes.append(UInt8(ascii: "}"))
    return Data(bytes)
  }

  /// The `batch` message of `batch`: encoded once per batch, and the bytes shared by every feed that
  /// sends it, so a server fanning one batch out to many clients encodes it once, not once per client.
  /// - Complexity: O(*k* log *n*) the first time for *k* changes; O(size of the message) to copy after.
  public func encode<Section>(_ batch: UpdateBatch<Section>) -> Data
  where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
    let form = formatVersion == 1 ? ObjectIdentifier(FormatOne.self) : ObjectIdentifier(WireCoder.self)
    return batch.shared(form) { encode(WireMessage<Section>.batch(WireBatch(batch))) }
  }

  /// The key of a batch's bytes in format 1.
  private enum FormatOne {}

  /// The message in `data`.
  /// - Throws: ``WireError``: ``WireError/Code-swift.struct/tooLarge``,
  ///   ``WireError/Code-swift.struct/malformed`` (with the coding path and reason),
  ///   ``WireError/Code-swift.struct/unsupportedFormat`` or ``WireError/Code-swift.struct/duplicateID``.
  /// - Complexity: O(size of the message).
  public func decode<Section>(_ data: Data, as section: Section.Type = Section.self) throws(WireError)
    -> WireMessage<Section>
  where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
    try read(data).message
  }

  /// The message in `data`, and the format number it was written in.
  /// - Throws: as ``decode(_:as:)``.
  /// - Complexity: O(size of the message).
  public func read<Section>(_ data: Data, as section: Section.Type = Section.self) throws(WireError)
    -> (message: WireMessage<Section>, formatVersion: Int)
  where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
    guard data.count <= maxMessageBytes else {
      throw WireError(.tooLarge, "\(data.count) bytes, at most \(maxMessageBytes)")
    }
    do {
      let decoder = JSONDecoder()
      let format = WireMessageFormat()
      decoder.userInfo[WireMessageFormat.userInfoKey] = format
      let message = try decoder.decode(WireMessage<Section>.self, from: data)
      return (message, format.number)
    } catch let error as WireError {
      throw error
    } catch let DecodingError.dataCorrupted(context) {
      throw WireError(.malformed, Self.describe(context, in: data))
    } catch let DecodingError.keyNotFound(key, context) {
      throw WireError(.malformed, "missing \(key.stringValue) at \(Self.path(context))")
    } catch let DecodingError.typeMismatch(type, context) {
      throw WireError(.malformed, "expected \(Self.jsonName(of: type)) at \(Self.path(context))")
    } catch let DecodingError.valueNotFound(type, context) {
      throw WireError(.malformed, "expected \(Self.jsonName(of: type)) at \(Self.path(context)), found null")
    } catch {
      throw WireError(.malformed, "the message could not be read")
    }
  }

  /// What a Swift type is called in JSON: a client reads JSON, and may not be written in Swift.
  private static func jsonName(of type: Any.Type) -> String {
    switch type {
    case is String.Type: "a string"
    case is Bool.Type: "true or false"
    case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type, is UInt64.Type: "an integer"
    case is Double.Type, is Float.Type: "a number"
    case is [Any].Type: "an array"
    case is [String: Any].Type: "an object"
    default: "another JSON value"
    }
  }

  private static func path(_ context: DecodingError.Context) -> String {
    let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(
      separator: ".")
    return path.isEmpty ? "the top" : path
  }

  /// A corrupted value, described. Foundation reports a number that is not an integer where one is
  /// expected (a version of 1.5) as "not valid JSON" with no path; valid JSON is searched for it instead.
  private static func describe(_ context: DecodingError.Context, in data: Data) -> String {
    guard context.codingPath.isEmpty else { return "\(context.debugDescription) at \(path(context))" }
    guard let json = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
      return "the bytes are not JSON"
    }
    if let (path, number) = firstNonInteger(in: json, path: []) {
      return
        "expected an integer at \(path.isEmpty ? "the top" : path.joined(separator: ".")), found \(number)"
    }
    return "a value is out of range"
  }

  /// The path and value of the first number that is not an integer, outside query parameters (where
  /// numbers may have fractions).
  private static func firstNonInteger(in json: Any, path: [String]) -> ([String], String)? {
    switch json {
    case let object as [String: Any]:
      for key in object.keys.sorted() where !(key == "parameters" && path.last == "query") {
        if let found = firstNonInteger(in: object[key]!, path: path + [key]) { return found }
      }
    case let array as [Any]:
      for (index, element) in array.enumerated() {
        if let found = firstNonInteger(in: element, path: path + ["\(index)"]) { return found }
      }
    case let number as NSNumber where !(json is Bool):
      let value = number.doubleValue
      if value.rounded() != value || abs(value) > 9.0e15 { return (path, "\(number)") }
    default: break
    }
    return nil
  }
}
