#!/usr/bin/env bash
# Every function nccl.h declares, and the host functions of NCCL's device API (nccl_device/*.h),
# are defined dynamic symbols of libnccl.so.2, and the library's SONAME is libnccl.so.2.
#   nccl_symbols.sh NCCL_H LIBNCCL
set -euo pipefail
header=${1:?usage: nccl_symbols.sh NCCL_H LIBNCCL} lib=${2:?usage: nccl_symbols.sh NCCL_H LIBNCCL}
device_api="ncclDevCommCreate ncclDevCommDestroy ncclTeamWorld ncclTeamLsa ncclTeamRail ncclTeamRankToWorld
  ncclTeamRankToLsa ncclLsaBarrierCreateRequirement ncclGinBarrierCreateRequirement ncclLLA2ACreateRequirement
  ncclLLA2ACalcSlots"
declared=$( (grep -oE '\bp?nccl[A-Za-z]+\(' "$header" | tr -d '('; tr ' ' '\n' <<< "$device_api") | grep . | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '{ print $NF }' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
[[ -z $missing ]] || { echo "not exported: $missing"; exit 1; }
soname=$(objdump -p "$lib" | awk '/SONAME/ { print $2 }')
[[ $soname == libnccl.so.2 ]] || { echo "SONAME is $soname"; exit 1; }
echo "$(echo "$declared" | wc -l) functions of nccl.h and the device API exported by $soname"
