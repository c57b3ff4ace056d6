//! `select!`, `join!` and `try_join!` for the `tokio` facade.
//!
//! The facade's `macro_rules!` wrappers call these with its own path first
//! (`$crate`), so the expansion names the facade however it was imported:
//! `select_impl!($crate; ...)`.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat, Token};

/// The most branches a `select!` takes: its disabled set is a `u64`.
const BRANCHES_MAX: usize = 64;

struct Branch {
    pat: Pat,
    fut: Expr,
    cond: Option<Expr>,
    handler: Expr,
}

struct Select {
    krate: Tokens,
    biased: bool,
    branches: Vec<Branch>,
    else_branch: Option<Expr>,
}

fn parse_krate(input: ParseStream) -> syn::Result<Tokens> {
    // Everything up to the first `;` is the facade's path (`$crate`).
    let mut krate = Tokens::new();
    while !input.peek(Token![;]) {
        let tt: proc_macro2::TokenTree = input.parse()?;
        krate.extend(std::iter::once(tt));
    }
    input.parse::<Token![;]>()?;
    Ok(krate)
}

fn parse_handler(input: ParseStream) -> syn::Result<Expr> {
    let handler: Expr = input.parse()?;
    let is_block = matches!(handler, Expr::Block(_));
    if input.peek(Token![,]) {
        input.parse::<Token![,]>()?;
    } else if !is_block && !input.is_empty() {
        return Err(input.error("expected `,` after a `select!` branch's handler"));
    }
    Ok(handler)
}

impl Parse for Select {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let krate = parse_krate(input)?;
        let mut biased = false;
        if input.peek(syn::Ident) && input.fork().parse::<syn::Ident>()? == "biased" {
            let fork = input.fork();
            fork.parse::<syn::Ident>()?;
            if fork.peek(Token![;]) {
                input.parse::<syn::Ident>()?;
                input.parse::<Token![;]>()?;
                biased = true;
            }
        }
        let mut branches = Vec::new();
        let mut else_branch = None;
        while !input.is_empty() {
            if input.peek(Token![else]) {
                input.parse::<Token![else]>()?;
                input.parse::<Token![=>]>()?;
                else_branch = Some(parse_handler(input)?);
                continue;
            }
            let pat = Pat::parse_multi_with_leading_vert(input)?;
            input.parse::<Token![=]>()?;
            let fut = Expr::parse_without_eager_brace(input)?;
            let cond = if input.peek(Token![,]) && input.peek2(Token![if]) {
                input.parse::<Token![,]>()?;
                input.parse::<Token![if]>()?;
                Some(input.parse::<Expr>()?)
            } else {
                None
            };
            input.parse::<Token![=>]>()?;
            let handler = parse_handler(input)?;
            branches.push(Branch {
                pat,
                fut,
                cond,
                handler,
            });
        }
        if branches.is_empty() && else_branch.is_none() {
            return Err(syn::Error::new(
                Span::call_site(),
                "`select!` needs at least one branch",
            ));
        }
        if branches.len() > BRANCHES_MAX {
            return Err(syn::Error::new(
                Span::call_site(),
                "`select!` takes at most 64 branches",
            ));
        }
        Ok(Select {
            krate,
            biased,
            branches,
            else_branch,
        })
    }
}

/// Turns a pattern into one that only tests: bindings lose `mut` and `ref`,
/// so the test can run on a borrow of the output without moving it.
struct CleanPattern;

impl VisitMut for CleanPattern {
    fn visit_pat_ident_mut(&mut self, node: &mut syn::PatIdent) {
        node.by_ref = None;
        node.mutability = None;
        if let Some((_, sub)) = &mut node.subpat {
            self.visit_pat_mut(sub);
        }
    }
}

#[doc(hidden)]
#[proc_macro]
pub fn select_impl(input: TokenStream) -> TokenStream {
    let select = syn::parse_macro_input!(input as Select);
    expand_select(select).into()
}

fn expand_select(select: Select) -> Tokens {
    let krate = &select.krate;
    let n = select.branches.len();
    if n == 0 {
        // Only `else`: every branch (none) is disabled.
        let handler = select.else_branch.as_ref().expect("checked by the parser");
        return quote! {{ #handler }};
    }
    let span = Span::mixed_site();
    let disabled = syn::Ident::new("__sim_disabled", span);
    let futures = syn::Ident::new("__sim_futures", span);
    let output = syn::Ident::new("__sim_output", span);
    let out_enum = syn::Ident::new("__SimOut", span);
    let variants: Vec<_> = (0..n).map(|i| format_ident!("_{}", i)).collect();
    let generics: Vec<_> = (0..n).map(|i| format_ident!("T{}", i)).collect();

    let conds = select.branches.iter().enumerate().map(|(i, b)| {
        let shift = i as u32;
        match &b.cond {
            Some(cond) => quote! { if !(#cond) { #disabled |= 1 << #shift; } },
            None => quote! {},
        }
    });
    // The expressions go into a tuple as they are, so that a borrowed
    // temporary (`&mut stream.next()`) lives as long as the select!, as in
    // a `let`; then each becomes its future.
    let futs = select.branches.iter().map(|b| {
        let fut = &b.fut;
        quote! { #fut }
    });
    let init = syn::Ident::new("__sim_init", span);
    let into_futs = (0..n).map(|i| {
        let index = syn::Index::from(i);
        quote! { #krate::macros::support::IntoFuture::into_future(#init.#index) }
    });
    let names = Names {
        krate,
        disabled: &disabled,
        futures: &futures,
        out_enum: &out_enum,
    };
    let polls = select
        .branches
        .iter()
        .enumerate()
        .map(|(i, b)| poll_arm(&names, i, b, &variants[i]));
    let (arms, refutable, else_arm) = output_arms(&select, &out_enum, &variants);
    let start = if select.biased {
        quote! { 0usize }
    } else {
        quote! { #krate::macros::support::thread_rng_n(#n as u32) as usize }
    };
    let count = n;
    let mask = mask_type(n);
    quote! {{
        enum #out_enum<#(#generics),*> {
            #(#variants(#generics),)*
            Disabled,
        }
        let mut #disabled: #mask = 0;
        #(#conds)*
        #[allow(unused_mut)]
        let mut #output = {
            let #init = ( #(#futs,)* );
            let mut #futures = ( #(#into_futs,)* );
            #[allow(unused_mut)]
            let mut #futures = &mut #futures;
            #krate::macros::support::poll_fn(|cx| {
                // Out of budget, the branches would only spend more.
                if #krate::macros::support::poll_budget_available(cx).is_pending() {
                    return ::core::task::Poll::Pending;
                }
                let start: usize = #start;
                let mut any_pending = false;
                for k in 0..#count {
                    // One branch makes this `% 1`, which clippy denies in
                    // the user's crate, where the macro expands.
                    #[allow(clippy::modulo_one)]
                    let branch = (start + k) % #count;
                    match branch {
                        #(#polls)*
                        _ => ::core::unreachable!("select! has {} branches", #count),
                    }
                }
                if any_pending {
                    ::core::task::Poll::Pending
                } else {
                    ::core::task::Poll::Ready(#out_enum::Disabled)
                }
            }).await
        };
        #[allow(unreachable_code)]
        match #output {
            #(#arms)*
            #(#refutable)*
            #else_arm
        }
    }}
}

/// The match arms after a `select!`'s poll: each branch's pattern and
/// handler, an unreachable arm for each (its pattern was checked before),
/// and the `else` (or the panic when every branch is disabled).
fn output_arms(
    select: &Select,
    out_enum: &syn::Ident,
    variants: &[syn::Ident],
) -> (Vec<Tokens>, Vec<Tokens>, Tokens) {
    let arms = select.branches.iter().enumerate().map(|(i, b)| {
        let pat = &b.pat;
        let handler = &b.handler;
        let variant = &variants[i];
        quote! {
            #out_enum::#variant(#pat) => #handler,
        }
    });
    let refutable = (0..variants.len()).map(|i| {
        let variant = &variants[i];
        quote! { #[allow(unreachable_patterns)] #out_enum::#variant(_) => ::core::unreachable!("a select! branch's pattern was checked before it was chosen"), }
    });
    let else_arm = match &select.else_branch {
        Some(handler) => quote! { #out_enum::Disabled => #handler, },
        None => quote! {
            #out_enum::Disabled => ::core::panic!("all branches are disabled and there is no else branch"),
        },
    };
    (arms.collect(), refutable.collect(), else_arm)
}

/// The smallest mask with a bit per branch, as tokio's: a `select!`'s
/// future is no larger than tokio's.
fn mask_type(n: usize) -> Tokens {
    match n {
        0..=8 => quote! { u8 },
        9..=16 => quote! { u16 },
        17..=32 => quote! { u32 },
        _ => quote! { u64 },
    }
}

struct Join {
    krate: Tokens,
    biased: bool,
    futures: Vec<Expr>,
}

impl Parse for Join {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let krate = parse_krate(input)?;
        let mut biased = false;
        if input.peek(syn::Ident) && input.peek2(Token![;]) {
            let ident: syn::Ident = input.fork().parse()?;
            if ident == "biased" {
                input.parse::<syn::Ident>()?;
                input.parse::<Token![;]>()?;
                biased = true;
            }
        }
        let futures = syn::punctuated::Punctuated::<Expr, Token![,]>::parse_terminated(input)?;
        Ok(Join {
            krate,
            biased,
            futures: futures.into_iter().collect(),
        })
    }
}

fn expand_join(join: Join, try_join: bool) -> Tokens {
    let krate = &join.krate;
    let n = join.futures.len();
    if n == 0 {
        return if try_join {
            quote! { async { ::core::result::Result::Ok(()) }.await }
        } else {
            quote! { async {}.await }
        };
    }
    let span = Span::mixed_site();
    let futures = syn::Ident::new("__sim_futures", span);
    let futs = join.futures.iter().map(|f| {
        quote! { #krate::macros::support::MaybeDone::new(#krate::macros::support::IntoFuture::into_future(#f)) }
    });
    let indices: Vec<_> = (0..n).map(syn::Index::from).collect();
    let polls = indices.iter().enumerate().map(|(i, index)| {
        let on_ready = if try_join {
            quote! {
                if #futures.#index.is_err() {
                    let err = #futures.#index.take_err();
                    return ::core::task::Poll::Ready(::core::result::Result::Err(err));
                }
            }
        } else {
            quote! {}
        };
        let skips = vec![quote! { _ }; i];
        quote! {
            #i => {
                // Taken by destructuring, so the closure captures the tuple
                // whole (a field expression would capture each field).
                let ( #(#skips,)* fut, .. ) = &mut *#futures;
                // SAFETY: the tuple lives on this async block's pinned frame
                // and is never moved.
                let fut = unsafe { ::core::pin::Pin::new_unchecked(fut) };
                if fut.poll_done(cx) {
                    #on_ready
                } else {
                    all_done = false;
                }
            }
        }
    });
    let outputs = indices.iter().map(|index| {
        if try_join {
            quote! { #futures.#index.take_ok() }
        } else {
            quote! { #futures.#index.take_output() }
        }
    });
    let finish = if try_join {
        quote! { ::core::task::Poll::Ready(::core::result::Result::Ok(( #(#outputs,)* ))) }
    } else {
        quote! { ::core::task::Poll::Ready(( #(#outputs,)* )) }
    };
    // Each poll starts one future further on, as tokio's join! does, so no
    // future can starve the others; `biased;` always starts at the first.
    // The closure takes the tuple's reference and the rotation by value
    // (`move`), so neither stays in the caller's frame beside it: the
    // future is no larger than tokio's.
    let next = syn::Ident::new("__sim_next", span);
    let start = if join.biased {
        quote! { 0usize }
    } else {
        quote! {{
            let start = #next as usize;
            #[allow(clippy::modulo_one)]
            let following = (#next + 1) % (#n as u32);
            #next = following;
            start
        }}
    };
    quote! {{
        let mut #futures = ( #(#futs,)* );
        let #futures = &mut #futures;
        #[allow(unused_mut, unused_variables)]
        let mut #next: u32 = 0;
        #krate::macros::support::poll_fn(move |cx| {
            let start: usize = #start;
            let mut all_done = true;
            for k in 0..#n {
                #[allow(clippy::modulo_one)]
                let branch = (start + k) % #n;
                match branch {
                    #(#polls)*
                    _ => ::core::unreachable!(),
                }
            }
            if !all_done {
                return ::core::task::Poll::Pending;
            }
            #finish
        }).await
    }}
}

#[doc(hidden)]
#[proc_macro]
pub fn join_impl(input: TokenStream) -> TokenStream {
    let join = syn::parse_macro_input!(input as Join);
    expand_join(join, false).into()
}

#[doc(hidden)]
#[proc_macro]
pub fn try_join_impl(input: TokenStream) -> TokenStream {
    let join = syn::parse_macro_input!(input as Join);
    expand_join(join, true).into()
}

// ----- #[tokio::test] -----------------------------------------------------

/// The runtime a `#[tokio::test]` builds.
#[derive(Clone, Copy, PartialEq)]
enum Flavor {
    CurrentThread,
    MultiThread,
    /// A `LocalRuntime` (`Builder::build_local`).
    Local,
}

/// The arguments `#[tokio::test(...)]` takes, as tokio-macros documents
/// them, with its errors for what it refuses.
struct TestArgs {
    flavor: Flavor,
    worker_threads: Option<syn::LitInt>,
    start_paused: Option<syn::LitBool>,
    krate: Option<syn::Path>,
    unhandled_panic: Option<syn::LitStr>,
    name: Option<syn::LitStr>,
}

/// A runtime flavor by name, or tokio-macros' message for a name it
/// refuses.
fn flavor_named(name: &str) -> Result<Flavor, String> {
    match name {
        "current_thread" => Ok(Flavor::CurrentThread),
        "multi_thread" => Ok(Flavor::MultiThread),
        "local" => Ok(Flavor::Local),
        "single_thread" => {
            Err("The single threaded runtime flavor is called `current_thread`.".to_string())
        }
        "basic_scheduler" => Err(
            "The `basic_scheduler` runtime flavor has been renamed to `current_thread`."
                .to_string(),
        ),
        "threaded_scheduler" => Err(
            "The `threaded_scheduler` runtime flavor has been renamed to `multi_thread`."
                .to_string(),
        ),
        other => Err(format!(
            "No such runtime flavor `{other}`. The runtime flavors are `current_thread`, \
             `local`, and `multi_thread`."
        )),
    }
}

fn parse_test_args(args: Tokens) -> syn::Result<TestArgs> {
    let mut out = TestArgs {
        flavor: Flavor::CurrentThread,
        worker_threads: None,
        start_paused: None,
        krate: None,
        unhandled_panic: None,
        name: None,
    };
    let mut flavor_set = false;
    let once = |set: bool, meta: &syn::meta::ParseNestedMeta<'_>, key: &str| {
        if set {
            Err(meta.error(format!("`{key}` set multiple times.")))
        } else {
            Ok(())
        }
    };
    let parser = syn::meta::parser(|meta| {
        let key = meta
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        match key.as_str() {
            "flavor" => {
                once(flavor_set, &meta, "flavor")?;
                let value: syn::LitStr = meta.value()?.parse()?;
                out.flavor = flavor_named(&value.value())
                    .map_err(|message| syn::Error::new(value.span(), message))?;
                flavor_set = true;
                Ok(())
            }
            "worker_threads" => {
                once(out.worker_threads.is_some(), &meta, "worker_threads")?;
                out.worker_threads = Some(meta.value()?.parse()?);
                Ok(())
            }
            "start_paused" => {
                once(out.start_paused.is_some(), &meta, "start_paused")?;
                out.start_paused = Some(meta.value()?.parse()?);
                Ok(())
            }
            "crate" => {
                once(out.krate.is_some(), &meta, "crate")?;
                let value: syn::LitStr = meta.value()?.parse()?;
                out.krate = Some(value.parse()?);
                Ok(())
            }
            "unhandled_panic" => {
                once(out.unhandled_panic.is_some(), &meta, "unhandled_panic")?;
                out.unhandled_panic = Some(meta.value()?.parse()?);
                Ok(())
            }
            "name" => {
                once(out.name.is_some(), &meta, "name")?;
                out.name = Some(meta.value()?.parse()?);
                Ok(())
            }
            "core_threads" => {
                Err(meta.error("Attribute `core_threads` is renamed to `worker_threads`"))
            }
            _ => Err(meta.error(format!(
                "Unknown attribute {key} is specified; expected one of: `flavor`, \
                 `worker_threads`, `start_paused`, `crate`, `unhandled_panic`, `name`."
            ))),
        }
    });
    syn::parse::Parser::parse2(parser, args)?;
    match out.flavor {
        Flavor::CurrentThread | Flavor::Local => {
            if let Some(n) = &out.worker_threads {
                return Err(syn::Error::new(
                    n.span(),
                    "The `worker_threads` option requires the `multi_thread` runtime flavor. \
                     Use `#[tokio::test(flavor = \"multi_thread\")]`",
                ));
            }
        }
        Flavor::MultiThread => {
            if let Some(paused) = &out.start_paused {
                return Err(syn::Error::new(
                    paused.span(),
                    "The `start_paused` option requires the `current_thread` runtime flavor. \
                     Use `#[tokio::test(flavor = \"current_thread\")]`",
                ));
            }
            if let Some(behaviour) = &out.unhandled_panic {
                return Err(syn::Error::new(
                    behaviour.span(),
                    "The `unhandled_panic` option requires the `current_thread` runtime \
                     flavor. Use `#[tokio::test(flavor = \"current_thread\")]`",
                ));
            }
        }
    }
    Ok(out)
}

/// `#[should_panic]` on the test, as the sweep must judge it: `None` when
/// absent, `Some(expected)` otherwise.
fn should_panic(attrs: &[syn::Attribute]) -> syn::Result<Option<Option<syn::LitStr>>> {
    for attr in attrs {
        if !attr.path().is_ident("should_panic") {
            continue;
        }
        let mut expected = None;
        match &attr.meta {
            syn::Meta::Path(_) => {}
            syn::Meta::NameValue(nv) => {
                if let Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) = &nv.value
                {
                    expected = Some(s.clone());
                }
            }
            syn::Meta::List(_) => {
                attr.parse_nested_meta(|meta| {
                    if meta.path.is_ident("expected") {
                        expected = Some(meta.value()?.parse()?);
                    }
                    Ok(())
                })?;
            }
        }
        return Ok(Some(expected));
    }
    Ok(None)
}

fn expand_test(args: TokenStream, item: TokenStream) -> syn::Result<Tokens> {
    let args = parse_test_args(args.into())?;
    let mut func: syn::ItemFn = syn::parse(item)?;
    if func.sig.asyncness.is_none() {
        return Err(syn::Error::new_spanned(
            func.sig.fn_token,
            "the `async` keyword is missing from the function declaration",
        ));
    }
    if !func.sig.inputs.is_empty() {
        return Err(syn::Error::new_spanned(
            &func.sig.inputs,
            "the test function cannot accept arguments",
        ));
    }
    func.sig.asyncness = None;
    let krate = match &args.krate {
        Some(path) => quote!(#path),
        None => quote!(::tokio),
    };
    let output = match &func.sig.output {
        syn::ReturnType::Default => quote!(()),
        syn::ReturnType::Type(_, ty) => quote!(#ty),
    };
    let mut builder = if args.flavor == Flavor::MultiThread {
        let mut b = quote!(#krate::runtime::Builder::new_multi_thread());
        if let Some(n) = &args.worker_threads {
            b = quote!(#b.worker_threads(#n));
        }
        b
    } else {
        quote!(#krate::runtime::Builder::new_current_thread())
    };
    builder = quote!(#builder.enable_all());
    if let Some(paused) = &args.start_paused {
        builder = quote!(#builder.start_paused(#paused));
    }
    if let Some(behaviour) = &args.unhandled_panic {
        let variant = match behaviour.value().as_str() {
            "ignore" => quote!(Ignore),
            "shutdown_runtime" => quote!(ShutdownRuntime),
            other => {
                return Err(syn::Error::new(
                    behaviour.span(),
                    format!("expected one of `ignore`, `shutdown_runtime`; found `{other}`"),
                ))
            }
        };
        builder = quote!(#builder.unhandled_panic(#krate::runtime::UnhandledPanic::#variant));
    }
    if let Some(name) = &args.name {
        builder = quote!(#builder.name(#name));
    }
    let build = if args.flavor == Flavor::Local {
        quote!(build_local(::core::default::Default::default()))
    } else {
        quote!(build())
    };
    let should_panic = match should_panic(&func.attrs)? {
        None => quote!(#krate::__sim::ShouldPanic::No),
        Some(None) => quote!(#krate::__sim::ShouldPanic::Yes(::core::option::Option::None)),
        Some(Some(text)) => {
            quote!(#krate::__sim::ShouldPanic::Yes(::core::option::Option::Some(#text)))
        }
    };
    let block = &func.block;
    let attrs = &func.attrs;
    let vis = &func.vis;
    let sig = &func.sig;
    // The body is a nested fn, so a sweep can run it once per seed: it
    // builds a fresh runtime and a fresh future each time.
    Ok(quote! {
        #(#attrs)*
        #[::core::prelude::v1::test]
        #vis #sig {
            #[allow(clippy::expect_used, clippy::needless_return, clippy::diverging_sub_expression)]
            fn __sim_test_body() -> #output {
                let body = async #block;
                let body = ::core::pin::pin!(body);
                let body: ::core::pin::Pin<&mut dyn ::core::future::Future<Output = #output>> = body;
                return #builder
                    .#build
                    .expect("Failed building the Runtime")
                    .block_on(body);
            }
            #krate::__sim::run_test(#should_panic, __sim_test_body)
        }
    })
}

/// `#[tokio::test]`: runs an async test on a fresh simulated runtime. The
/// arguments are tokio's (`flavor` = `current_thread`, `multi_thread` or
/// `local`, `worker_threads`, `start_paused`, `crate`, `unhandled_panic`,
/// `name`). Under `cargo sim test --seeds`, the body
/// runs once per seed in one process (see `sim_runtime::sweep`).
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    match expand_test(args, item) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// The names the expansion of one `select!` shares between its parts.
struct Names<'a> {
    krate: &'a Tokens,
    disabled: &'a syn::Ident,
    futures: &'a syn::Ident,
    out_enum: &'a syn::Ident,
}

/// Branch `i`'s arm of the poll loop: skipped when disabled, polled, and
/// its output matched against its pattern (a mismatch disables it).
fn poll_arm(names: &Names<'_>, i: usize, b: &Branch, variant: &syn::Ident) -> Tokens {
    let Names {
        krate,
        disabled,
        futures,
        out_enum,
    } = names;
    let skips = vec![quote! { _ }; i];
    // Unsuffixed: the mask is as wide as the branches need (u8 to u64).
    let bit = proc_macro2::Literal::u64_unsuffixed(1u64 << i);
    let mut check = b.pat.clone();
    CleanPattern.visit_pat_mut(&mut check);
    quote! {
        #i => {
            if #disabled & #bit != 0 {
                continue;
            }
            // SAFETY: the futures live in a tuple on this async block's
            // pinned stack frame and are never moved until dropped.
            // Taken by destructuring: a field expression would make the
            // closure capture each field apart, 8 bytes more per branch.
            let ( #(#skips,)* fut, .. ) = &mut *#futures;
            let fut = unsafe { ::core::pin::Pin::new_unchecked(fut) };
            // The output is bound first and tested after: matching it
            // inside the `Ready` arm would need its type known there,
            // which a disabled branch's future may never fix.
            let out = match #krate::macros::support::Future::poll(fut, cx) {
                ::core::task::Poll::Ready(out) => out,
                ::core::task::Poll::Pending => {
                    any_pending = true;
                    continue;
                }
            };
            // Done either way: a branch that completed is never polled
            // again.
            #disabled |= #bit;
            #[allow(unused_variables, unreachable_patterns, clippy::redundant_pattern_matching)]
            match &out {
                #check => {}
                _ => continue,
            }
            return ::core::task::Poll::Ready(#out_enum::#variant(out));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(args: Tokens) -> String {
        match parse_test_args(args) {
            Ok(_) => "accepted".to_string(),
            Err(e) => e.to_string(),
        }
    }

    /// What tokio-macros refuses, refused with its words.
    #[::core::prelude::v1::test]
    fn refused_attributes_get_tokio_macros_errors() {
        assert!(error_of(quote!(flavor = "single_thread")).contains("is called `current_thread`"));
        assert!(
            error_of(quote!(flavor = "basic_scheduler")).contains("renamed to `current_thread`")
        );
        assert!(error_of(quote!(flavor = "other"))
            .contains("The runtime flavors are `current_thread`, `local`, and `multi_thread`."));
        assert!(error_of(quote!(flavor = "local", worker_threads = 2))
            .contains("requires the `multi_thread` runtime flavor"));
        assert!(
            error_of(quote!(flavor = "multi_thread", start_paused = true))
                .contains("requires the `current_thread` runtime flavor")
        );
        assert!(
            error_of(quote!(flavor = "multi_thread", unhandled_panic = "ignore"))
                .contains("`unhandled_panic` option requires the `current_thread`")
        );
        assert!(error_of(quote!(name = "a", name = "b")).contains("`name` set multiple times."));
        assert!(error_of(quote!(colour = "red")).contains(
            "expected one of: `flavor`, `worker_threads`, `start_paused`, `crate`, \
             `unhandled_panic`, `name`."
        ));
        assert_eq!(
            error_of(quote!(flavor = "local", name = "rt", start_paused = true)),
            "accepted"
        );
    }
}
