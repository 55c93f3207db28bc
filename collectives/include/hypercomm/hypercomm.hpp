// The one header a user includes (API.md).
#pragma once

#include <hypercomm/cards.hpp>
#include <hypercomm/collectives.hpp>
#include <hypercomm/errors.hpp>
#include <hypercomm/group.hpp>
#include <hypercomm/machine.hpp>
#include <hypercomm/ops.hpp>
#include <hypercomm/options.hpp>
#include <hypercomm/picture.hpp>
#include <hypercomm/proc.hpp>
#include <hypercomm/report.hpp>
#include <hypercomm/topology.hpp>
