//! The endpoint's dispatcher for [`AgentSession`], under the name the session was given.
//!
//! The `#[restate_sdk::object]` macro fixes a service's name at compile time; one Restate
//! cluster serving several agents (or several test runs) needs one name per agent. The macro
//! still describes the handlers (shared or exclusive, input and output); this dispatcher
//! routes by handler name exactly as the macro's own does, and the definition carries the
//! session's name. (`restate_sdk::service::macro_support` is the SDK's codegen surface; the
//! SDK is pinned to 0.13.0.)

use std::sync::Arc;

use restate_sdk::endpoint::{ContextInternal, Error};
use restate_sdk::service::macro_support::{service_definition, ServiceBoxFuture};
use restate_sdk::service::{Discoverable, Service, ServiceDefinition};

use crate::error::RestateError;
use crate::object::AgentSession;

/// Routes each invocation to the session's handler of that name.
struct Dispatcher {
    session: Arc<AgentSession>,
}

impl Service for Dispatcher {
    type Future = ServiceBoxFuture;

    fn handle(&self, ctx: ContextInternal) -> Self::Future {
        let session = Arc::clone(&self.session);
        Box::pin(async move {
            match ctx.handler_name() {
                "send" => {
                    let (input, metadata) = ctx.input().await;
                    let result = session.send((&ctx, metadata).into(), input).await;
                    ctx.handle_handler_result(result);
                }
                "state" => {
                    let (_, metadata) = ctx.input::<()>().await;
                    let result = session.state((&ctx, metadata).into()).await;
                    ctx.handle_handler_result(result);
                }
                "pending_approvals" => {
                    let (_, metadata) = ctx.input::<()>().await;
                    let result = session.pending_approvals((&ctx, metadata).into()).await;
                    ctx.handle_handler_result(result);
                }
                "approve" => {
                    let (input, metadata) = ctx.input().await;
                    let result = session.approve((&ctx, metadata).into(), input).await;
                    ctx.handle_handler_result(result);
                }
                "reject" => {
                    let (input, metadata) = ctx.input().await;
                    let result = session.reject((&ctx, metadata).into(), input).await;
                    ctx.handle_handler_result(result);
                }
                "cancel" => {
                    let (_, metadata) = ctx.input::<()>().await;
                    let result = session.cancel((&ctx, metadata).into()).await;
                    ctx.handle_handler_result(result);
                }
                "expire_approvals" => {
                    let (input, metadata) = ctx.input().await;
                    let result = session
                        .expire_approvals((&ctx, metadata).into(), input)
                        .await;
                    ctx.handle_handler_result(result);
                }
                _ => {
                    return Err(Error::unknown_handler(
                        ctx.service_name(),
                        ctx.handler_name(),
                    ))
                }
            }
            ctx.end();
            Ok(())
        })
    }
}

/// The service definition of `session`, named [`AgentSession::name`].
pub(crate) fn definition(session: AgentSession) -> Result<ServiceDefinition, RestateError> {
    let mut discovery = <AgentSession as Discoverable>::discover();
    discovery.name = session.name().parse().map_err(|_| RestateError::Name {
        name: session.name().to_owned(),
    })?;
    Ok(service_definition(
        Dispatcher {
            session: Arc::new(session),
        },
        discovery,
    ))
}
