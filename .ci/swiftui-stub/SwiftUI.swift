// A type-checking stand-in for the parts of SwiftUI the skin and the README use (Linux has no SwiftUI); see
// .ci/skins-typecheck. Signatures follow Apple's documentation of the iOS 18 SDK and later: `View` and
// `ViewModifier` are main-actor protocols whose `body` is a `ViewBuilder`, the views' initialisers and
// modifiers are `nonisolated`, a button's action is `@MainActor`, `onMove`/`onDelete` return dynamic
// content (also after a modifier), Observation is not re-exported, and SwiftUI's own `Transaction` and
// `Section` are here to clash with SimpleSource's. It proves the skin is well-typed Swift 6 against those
// signatures, not that SwiftUI agrees; it checks no availability but tvOS's missing swipe actions, and
// nothing at run time (when SwiftUI re-evaluates a body, whether it honours `equatable()`, what a
// destructive role does). Nothing here does anything.
@_exported public import Foundation

@MainActor @preconcurrency
public protocol View {
  associatedtype Body: View
  @ViewBuilder @MainActor @preconcurrency var body: Body { get }
}

extension Never: View {
  public var body: Never { fatalError() }
}

/// A view that is never drawn: what the stand-in's containers return.
public struct _StandInView: View {
  nonisolated init() {}
  public var body: Never { fatalError() }
}

public struct EmptyView: View {
  nonisolated public init() {}
  public var body: Never { fatalError() }
}

public struct TupleView<T>: View {
  nonisolated public init(_ value: T) {}
  public var body: Never { fatalError() }
}

public struct _ConditionalContent<TrueContent: View, FalseContent: View>: View {
  nonisolated init() {}
  public var body: Never { fatalError() }
}

extension Optional: View where Wrapped: View {
  public var body: Never { fatalError() }
}

@resultBuilder
public struct ViewBuilder {
  public static func buildExpression<Content: View>(_ content: Content) -> Content { content }
  public static func buildBlock() -> EmptyView { EmptyView() }
  public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
  public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<
    (repeat each Content)
  > { TupleView((repeat each content)) }
  public static func buildIf<Content: View>(_ content: Content?) -> Content? { content }
  public static func buildEither<TrueContent: View, FalseContent: View>(first: TrueContent)
    -> _ConditionalContent<TrueContent, FalseContent>
  { _ConditionalContent() }
  public static func buildEither<TrueContent: View, FalseContent: View>(second: FalseContent)
    -> _ConditionalContent<TrueContent, FalseContent>
  { _ConditionalContent() }
  public static func buildLimitedAvailability<Content: View>(_ content: Content) -> AnyView { AnyView(content) }
}

public struct AnyView: View {
  nonisolated public init<V: View>(_ view: V) {}
  public var body: Never { fatalError() }
}

public struct LocalizedStringKey: Equatable, ExpressibleByStringInterpolation {
  public init(_ value: String) {}
  public init(stringLiteral value: String) {}
}

public struct Text: View, Equatable {
  nonisolated public init(_ key: LocalizedStringKey) {}
  @_disfavoredOverload nonisolated public init<S: StringProtocol>(_ content: S) {}
  nonisolated public init(verbatim content: String) {}
  public var body: Never { fatalError() }
}

public struct Image: View {
  nonisolated public init(systemName: String) {}
  public var body: Never { fatalError() }
}

public struct Label<Title: View, Icon: View>: View {
  nonisolated public init(_ titleKey: LocalizedStringKey, systemImage name: String)
  where Title == Text, Icon == Image {}
  @_disfavoredOverload nonisolated public init<S: StringProtocol>(_ title: S, systemImage name: String)
  where Title == Text, Icon == Image {}
  public var body: Never { fatalError() }
}

public struct ButtonRole: Equatable, Sendable {
  public static let destructive = ButtonRole()
  public static let cancel = ButtonRole()
}

public struct Button<Label: View>: View {
  @preconcurrency nonisolated public init(action: @escaping @MainActor () -> Void, @ViewBuilder label: () -> Label) {}
  @preconcurrency nonisolated public init(
    role: ButtonRole?, action: @escaping @MainActor () -> Void, @ViewBuilder label: () -> Label
  ) {}
  public var body: Never { fatalError() }
}

extension Button where Label == Text {
  @preconcurrency nonisolated public init(_ titleKey: LocalizedStringKey, action: @escaping @MainActor () -> Void) {}
}

public struct EditButton: View {
  nonisolated public init() {}
  public var body: Never { fatalError() }
}

public struct List<SelectionValue: Hashable, Content: View>: View {
  public var body: Never { fatalError() }
}

extension List where SelectionValue == Never {
  nonisolated public init(@ViewBuilder content: () -> Content) {}
}

public struct Section<Parent: View, Content: View, Footer: View>: View {
  public var body: Never { fatalError() }
}

extension Section where Parent == Text, Footer == EmptyView {
  nonisolated public init(_ titleKey: LocalizedStringKey, @ViewBuilder content: () -> Content) {}
  @_disfavoredOverload nonisolated public init<S: StringProtocol>(_ title: S, @ViewBuilder content: () -> Content) {}
}

/// A view made from a collection; `onMove` and `onDelete` are its modifiers only.
public protocol DynamicViewContent<Data>: View {
  associatedtype Data: Collection
  var data: Data { get }
}

extension DynamicViewContent {
  nonisolated public func onMove(perform action: ((IndexSet, Int) -> Void)?) -> some DynamicViewContent<Data> {
    _DynamicStandIn<Data>()
  }
  nonisolated public func onDelete(perform action: ((IndexSet) -> Void)?) -> some DynamicViewContent<Data> {
    _DynamicStandIn<Data>()
  }
}

public struct _DynamicStandIn<Data: Collection>: DynamicViewContent {
  nonisolated init() {}
  public var data: Data { fatalError() }
  public var body: Never { fatalError() }
}

public struct ForEach<Data: RandomAccessCollection, ID: Hashable, Content> {
  public var data: Data
}

extension ForEach: View, DynamicViewContent where Content: View {
  public var body: Never { fatalError() }
}

extension ForEach where ID == Data.Element.ID, Content: View, Data.Element: Identifiable {
  nonisolated public init(_ data: Data, @ViewBuilder content: @escaping (Data.Element) -> Content) {
    self.data = data
  }
}

extension ForEach where Content: View {
  nonisolated public init(
    _ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder content: @escaping (Data.Element) -> Content
  ) {
    self.data = data
  }
}

extension ForEach where Data == Range<Int>, ID == Int, Content: View {
  nonisolated public init(_ data: Range<Int>, @ViewBuilder content: @escaping (Int) -> Content) {
    self.data = data
  }
}

public enum HorizontalEdge: Int8, CaseIterable, Sendable {
  case leading, trailing
}

@MainActor @preconcurrency
public protocol ViewModifier {
  associatedtype Body: View
  @ViewBuilder @MainActor @preconcurrency func body(content: Content) -> Body
  typealias Content = _ViewModifier_Content<Self>
}

public struct _ViewModifier_Content<Modifier: ViewModifier>: View {
  public var body: Never { fatalError() }
}

public struct ModifiedContent<Content, Modifier> {
  public var content: Content
  public var modifier: Modifier
}

extension ModifiedContent: View where Content: View, Modifier: ViewModifier {
  public var body: Never { fatalError() }
}

/// A modified `ForEach` (or any dynamic content) is still dynamic content: `onMove` after a modifier.
extension ModifiedContent: DynamicViewContent where Content: DynamicViewContent, Modifier: ViewModifier {
  public var data: Content.Data { content.data }
}

extension View {
  nonisolated public func modifier<T>(_ modifier: T) -> ModifiedContent<Self, T> {
    ModifiedContent(content: self, modifier: modifier)
  }

  @available(tvOS, unavailable)
  nonisolated public func swipeActions<T: View>(
    edge: HorizontalEdge = .trailing, allowsFullSwipe: Bool = true, @ViewBuilder content: () -> T
  ) -> some View { _StandInView() }

  nonisolated public func toolbar<Content: View>(@ViewBuilder content: () -> Content) -> some View {
    _StandInView()
  }

  nonisolated public func tint(_ tint: Color?) -> some View { _StandInView() }
}

/// A view SwiftUI compares with its own `==` before asking for its body again.
public struct EquatableView<Content: View & Equatable> {
  public var content: Content
  nonisolated public init(content: Content) { self.content = content }
}

extension EquatableView: View {
  public var body: Never { fatalError() }
}

extension View where Self: Equatable {
  nonisolated public func equatable() -> EquatableView<Self> { EquatableView(content: self) }
}

/// A color (only what the skin uses).
public struct Color: Hashable, Sendable {
  let name: String
  public static let red = Color(name: "red")
}

/// SwiftUI's transaction (the context of one state change: its animation), which every file that
/// imports SwiftUI and SimpleSource sees next to SimpleSource's `Transaction`.
public struct Transaction {
  public init() {}
  public var disablesAnimations: Bool = false
}
