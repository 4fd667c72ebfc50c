"""Voila's settings for `make dashboard` (the explorer as a dashboard, no code shown).

The Makefile points Voila here (--Voila.config_file_paths) and at the template in
voila/templates/fpexplore (JUPYTER_PATH); tests/test_dashboard.py starts Voila from the
Makefile's own command line and checks what these settings promise.
"""

c = get_config()  # noqa: F821 (traitlets defines it for config files)

# Voila's lab template without its links to a CDN: the page loads nothing from another machine
c.VoilaConfiguration.template = "fpexplore"

# Each page visit starts a kernel (the app keeps a few hundred MB of compiled kernels and
# results). Closing the page shuts it down at once: the page sends Voila a shutdown request on
# `beforeunload`, which Voila accepts only with the _xsrf cookie, and Voila's notebook page does
# not set that cookie (the request fails with 403 "'_xsrf' argument missing from POST"). This
# hook runs for every page visit before the kernel starts, while the response headers can still
# be changed; reading handler.xsrf_token sets the cookie.


def _set_xsrf_cookie(handler, notebook, cwd):
    handler.xsrf_token  # noqa: B018 (the property sets the cookie)
    return None  # the notebook as it is


c.VoilaConfiguration.prelaunch_hook = _set_xsrf_cookie

# Where no shutdown request arrives (a crashed tab, a lost connection, a killed browser), the
# kernel is culled: once no page is connected to it and it has been idle for 5 minutes, checked
# every minute, so it is gone at most 6 minutes after its page. A kernel with a page connected is
# never culled (cull_connected), however long the page sits idle; a busy one neither (cull_busy).
c.MappingKernelManager.cull_idle_timeout = 300
c.MappingKernelManager.cull_interval = 60
c.MappingKernelManager.cull_connected = False
c.MappingKernelManager.cull_busy = False
