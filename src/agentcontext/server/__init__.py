"""``agentcontext server``: the control plane's API and the dashboard, composed into one app and served.

Neither the control plane (``control``) nor the dashboard (``dashboard``) imports the other's
app: ``app.build_app`` makes the API and adds the dashboard's pages to it, both over the same
services (``control.plane.ControlPlane``); ``run`` serves it with uvicorn until a signal.
"""
