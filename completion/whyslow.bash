# bash completion for whyslow(1)                                     -*- shell-script -*-
# Subcommands, each one's options (the same lists `whyslow CMD --help` prints), --sources from
# the plugins installed in the plugin directory, and process ids for attach/-p.

_whyslow_plugin_dir()
{
	local i
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--plugin-dir) echo "${COMP_WORDS[i + 1]}"; return ;;
		--plugin-dir=*) echo "${COMP_WORDS[i]#--plugin-dir=}"; return ;;
		esac
	done
	echo "${WHYSLOW_PLUGIN_DIR:-@PLUGINDIR@}"
}

# --sources a,b,<TAB>: complete the last item of the list from the installed plugins
_whyslow_sources()
{
	local dir cur=$1 prefix= f names=()
	dir=$(_whyslow_plugin_dir)
	[[ $cur == *,* ]] && prefix=${cur%,*},
	for f in "$dir"/*.so; do
		[ -e "$f" ] || continue
		f=${f##*/}
		names+=("$prefix${f%.so}")
	done
	COMPREPLY=($(compgen -W "${names[*]}" -- "$cur"))
	compopt -o nospace 2>/dev/null
}

_whyslow_pids()
{
	COMPREPLY=($(compgen -W "$(cd /proc && printf '%s\n' [0-9]*)" -- "$1"))
}

_whyslow()
{
	local cur prev words cword cmd= i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	local common="-c --config --sources --plugin-dir -v --verbose -h --help"
	local trace="--format -o --output --min-block --top --include-idle --duration --perfetto"

	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--) [ "$cmd" = attach ] || { [ -n "$cmd" ] || cmd=run; _command_offset $((i + 1)) 2>/dev/null; return; } ;;
		run | attach | record | report | help)
			if [ -z "$cmd" ]; then
				cmd=${COMP_WORDS[i]}
			elif [ "$cmd" = record ] && [ "${COMP_WORDS[i]}" = attach ]; then
				cmd=attach
			fi
			;;
		esac
	done

	case $prev in
	-c | --config | -o | --output | --perfetto | --live)
		COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
	--plugin-dir)
		COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
	--sources) _whyslow_sources "$cur"; return ;;
	--format)
		if [ "$cmd" = report ]; then
			COMPREPLY=($(compgen -W "text json folded perfetto" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "text json folded" -- "$cur"))
		fi
		return ;;
	-p | --pid)
		[ "$cmd" = report ] && return
		_whyslow_pids "$cur"; return ;;
	-u | --user) COMPREPLY=($(compgen -u -- "$cur")); return ;;
	--min-block | --duration) COMPREPLY=($(compgen -W "1ms 10ms 100ms 1s 10s 30s" -- "$cur")); return ;;
	--since | --until) COMPREPLY=($(compgen -W "1s 10s 1m" -- "$cur")); return ;;
	--top | --tid | --comm) return ;;
	esac
	case $cur in
	--sources=*) _whyslow_sources "${cur#--sources=}"; COMPREPLY=("${COMPREPLY[@]/#/--sources=}"); return ;;
	--config-help=*) COMPREPLY=($(compgen -W "--config-help=text --config-help=ini --config-help=man" -- "$cur")); return ;;
	esac

	case $cmd in
	'')
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$common --config-help --version -p --pid" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "run attach record report help" -- "$cur"))
		fi ;;
	run)
		COMPREPLY=($(compgen -W "$common $trace -u --user --as-root --" -- "$cur"))
		[[ $cur == -* ]] || _command_offset "$COMP_CWORD" 2>/dev/null ;;
	attach)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$common $trace -p --pid" -- "$cur"))
		else
			_whyslow_pids "$cur"
		fi ;;
	record)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$common $trace --live -u --user --as-root --" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "attach" -- "$cur"))
		fi ;;
	report)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--format -o --output --min-block --top --tid -p --pid --comm --since --until --include-idle --plugin-dir -v --verbose -h --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null
		fi ;;
	help) COMPREPLY=($(compgen -W "run attach record report" -- "$cur")) ;;
	esac
} &&
	complete -F _whyslow whyslow
